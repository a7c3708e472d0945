<?php
// Reads `phpunit --list-tests-xml`'s file and applies ADR 0005: one entry per test
// method where it is written (ReflectionMethod's declaring file and `function` line;
// data sets once; an inherited method at its base), skipped for PHPUnit's own
// requirements (`@requires`, `#[Requires…]`, PHPUnit\Util\Test::getRequirements) or a
// top-level `markTestSkipped`/`markTestIncomplete` statement (PHP's own tokenizer).
//   php phpunit_truth.php ROOT LIST_XML > tests.json
[$_, $root, $list] = $argv;
$root = rtrim(realpath($root), '/') . '/';
require '/usr/share/php/PHPUnit/Autoload.php';  // Debian's phpunit
require $root . 'vendor/autoload.php';
$bootstrap = getenv('PHP_BOOTSTRAP');
if ($bootstrap) { require_once $root . $bootstrap; }

function top_level_skip(ReflectionMethod $m): bool {
    $lines = file($m->getFileName());
    $source = "<?php " . implode('', array_slice($lines, $m->getStartLine() - 1, $m->getEndLine() - $m->getStartLine() + 1));
    $depth = 0; $previous = null; $statementStart = false;
    foreach (token_get_all($source) as $token) {
        if (is_array($token) && in_array($token[0], [T_WHITESPACE, T_COMMENT, T_DOC_COMMENT], true)) { continue; }
        $text = is_array($token) ? $token[1] : $token;
        if ($text === '{' || $text === '(' || $text === '[') { $depth++; }
        if ($text === '}' || $text === ')' || $text === ']') { $depth--; }
        if ($depth === 1 && in_array($text, ['markTestSkipped', 'markTestIncomplete'], true) && in_array($previous, ['->', '::'], true)) {
            return true;
        }
        $previous = $text;
    }
    return false;
}

$xml = simplexml_load_file($list);
// The files PHPUnit itself took as test files: those declaring a class it lists. A test
// inherited from another file (an abstract base PHPUnit never selects, like
// ParserTestAbstract.php) counts nowhere, as pytest's from another module (ADR 0005).
$selected = [];
foreach ($xml->testCaseClass as $class) {
    $selected[realpath((new ReflectionClass((string) $class['name']))->getFileName())] = true;
}
$elsewhere = [];
$seen = [];
$tests = [];
$count = 0;
foreach ($xml->testCaseClass as $class) {
    foreach ($class->testCaseMethod as $method) {
        $count++;
        $name = (string) $method['name'];
        $m = new ReflectionMethod((string) $class['name'], $name);
        if (!isset($selected[realpath($m->getFileName())])) {
            $elsewhere[substr(realpath($m->getFileName()), strlen($root)) . ":$name"] = true;
            continue;
        }
        $file = substr(realpath($m->getFileName()), strlen($root));
        $key = "$file:{$m->getStartLine()}:$name";
        if (isset($seen[$key])) { continue; }
        $seen[$key] = true;
        $requirements = PHPUnit\Util\Test::getRequirements($m->getDeclaringClass()->getName(), $name);
        unset($requirements['__OFFSET']);  // where they were read, not one of them
        $skipped = $requirements !== [] || top_level_skip($m);
        $tests[] = ['file' => $file, 'line' => $m->getStartLine(), 'name' => $name,
                    'status' => $skipped ? 'skipped' : 'active'];
    }
}
usort($tests, fn ($a, $b) => [$a['file'], $a['line']] <=> [$b['file'], $b['line']]);
echo json_encode(['runner_count' => $count, 'elsewhere' => array_keys($elsewhere), 'tests' => $tests], JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES), "\n";
