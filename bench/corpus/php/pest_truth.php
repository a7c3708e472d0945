<?php
// Pest truth without Pest (no Composer or Packagist here): PHPUnit's own code reads
// the project's phpunit.xml(.dist) and lists its test files (Debian phpunit 9.6:
// XmlConfiguration\Loader, FileIterator\Facade), then each file is run by PHP itself
// with stand-ins for Pest's functions that record each `it`/`test` call where it is
// made (debug_backtrace), run `describe` closures at once, and read the chained
// `->skip()`, `->todo()`, `->only()`. Test bodies are never run. ADR 0005: one entry
// per call (datasets once), `it` titled "it …", no closure or ->todo() a todo.
//   php pest_truth.php ROOT > tests.json
[$_, $root] = $argv;
$root = rtrim(realpath($root), '/') . '/';
require '/usr/share/php/PHPUnit/Autoload.php';
require $root . 'vendor/autoload.php';

final class Recorded {
    public static array $tests = [];
    public static array $open = [];  // the describe calls being run, each its tests' indices
}

final class Chain {
    public function __construct(private array $indices) {}
    public function __call(string $name, array $arguments): self {
        $status = ['skip' => 'skipped', 'todo' => 'todo', 'only' => 'focused'][$name] ?? null;
        foreach ($status === null ? [] : $this->indices as $i) {
            $current = Recorded::$tests[$i]['status'];
            // todo > skipped > focused (ADR 0005's order)
            $rank = ['active' => 0, 'focused' => 1, 'skipped' => 2, 'todo' => 3];
            if ($rank[$status] > $rank[$current] && !($status !== 'todo' && $current === 'todo')) {
                Recorded::$tests[$i]['status'] = $status;
            }
        }
        return $this;
    }
    public function __get(string $name): self { return $this; }
    public static function __callStatic(string $name, array $arguments): self { return new self([]); }
}

function record(string $title, $closure): Chain {
    $frame = debug_backtrace(DEBUG_BACKTRACE_IGNORE_ARGS, 2)[1];
    Recorded::$tests[] = ['file' => substr(realpath($frame['file']), strlen($GLOBALS['root'])),
        'line' => $frame['line'], 'name' => $title,
        'status' => $closure === null ? 'todo' : 'active'];
    $index = array_key_last(Recorded::$tests);
    foreach (Recorded::$open as &$indices) { $indices[] = $index; }
    return new Chain([$index]);
}
function it(string $title, $closure = null): Chain { return record("it $title", $closure); }
function test(?string $title = null, $closure = null): Chain {
    return $title === null ? new Chain([]) : record($title, $closure);
}
function describe(string $title, Closure $closure): Chain {
    Recorded::$open[] = [];
    $closure();
    return new Chain(array_pop(Recorded::$open));
}
foreach (['beforeEach', 'afterEach', 'beforeAll', 'afterAll', 'uses', 'pest', 'dataset',
          'expect', 'covers', 'mutates', 'todo'] as $function) {
    eval("function $function(...\$a): Chain { return new Chain([]); }");
}

$config = is_file($root . 'phpunit.xml') ? 'phpunit.xml' : 'phpunit.xml.dist';
$configuration = (new PHPUnit\TextUI\XmlConfiguration\Loader)->load($root . $config);
$files = [];
foreach ($configuration->testSuite() as $suite) {
    $excludes = array_map(fn ($f) => $f->path(), iterator_to_array($suite->exclude()));
    foreach ($suite->directories() as $directory) {
        $found = (new SebastianBergmann\FileIterator\Facade)->getFilesAsArray(
            $directory->path(), $directory->suffix(), $directory->prefix(), $excludes);
        foreach ($found as $file) { $files[realpath($file)] = true; }
    }
    foreach ($suite->files() as $file) { $files[realpath($file->path())] = true; }
}
ksort($files);
foreach (array_keys($files) as $file) {
    (static function () use ($file) { require $file; })();
}
$tests = Recorded::$tests;
usort($tests, fn ($a, $b) => [$a['file'], $a['line']] <=> [$b['file'], $b['line']]);
echo json_encode(['runner_count' => count($tests), 'files' => count($files), 'tests' => $tests],
    JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES), "\n";
