<?php
// A stand-in for Composer's vendor/autoload.php (no Composer or Packagist here): the
// project's own psr-4, psr-0, classmap and files entries of composer.json (autoload
// and autoload-dev), so that PHPUnit can load its test classes; then Debian's PHP
// libraries (/usr/share/php, PSR-4 by namespace: php-symfony-console...).
(function (): void {
$root = dirname(__DIR__);
$composer = json_decode(file_get_contents("$root/composer.json"), true);
$psr4 = [];
$psr0 = [];
foreach (['autoload', 'autoload-dev'] as $section) {
    $entries = $composer[$section] ?? [];
    foreach ($entries['psr-4'] ?? [] as $prefix => $dirs) {
        foreach ((array) $dirs as $dir) { $psr4[] = [$prefix, "$root/$dir"]; }
    }
    foreach ($entries['psr-0'] ?? [] as $prefix => $dirs) {
        foreach ((array) $dirs as $dir) { $psr0[] = [$prefix, "$root/$dir"]; }
    }
    foreach ($entries['files'] ?? [] as $file) { require_once "$root/$file"; }
}
spl_autoload_register(function (string $class) use ($psr4, $psr0): void {
    foreach ($psr4 as [$prefix, $dir]) {
        if ($prefix === '' || str_starts_with($class, $prefix)) {
            $file = rtrim($dir, '/') . '/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
            if (is_file($file)) { require $file; return; }
        }
    }
    foreach ($psr0 as [$prefix, $dir]) {
        if ($prefix === '' || str_starts_with($class, $prefix)) {
            $file = rtrim($dir, '/') . '/' . str_replace(['\\', '_'], '/', $class) . '.php';
            if (is_file($file)) { require $file; return; }
        }
    }
    $debian = '/usr/share/php/' . str_replace('\\', '/', $class) . '.php';
    if (is_file($debian)) { require $debian; }
}, true, true);
})();
