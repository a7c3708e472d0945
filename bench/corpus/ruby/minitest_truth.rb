# Lists every minitest test definition of a project: ruby minitest_truth.rb ROOT OUT FILE...
# Loads the given test files (the Rakefile TestTask's) with lib/ and test/ on the load
# path, then asks each runnable class for its runnable methods and their source lines.
# An `it` is a method defined from its block: its line is the `it` call's.
require "minitest"
require_relative "common"

root, out, *patterns = ARGV
Dir.chdir(root)
files = patterns.flat_map { |p| Dir.glob(p).sort }
$LOAD_PATH.unshift(File.expand_path("lib"), File.expand_path("test"))
module Minitest
  def self.autorun; end # list, never run
end
files.each { |f| require File.expand_path(f) }
Minitest.seed = 0 # runnable_methods shuffles with it

tests = []
count = 0
Minitest::Runnable.runnables.each do |klass|
  next unless klass <= Minitest::Test
  klass.runnable_methods.each do |name|
    count += 1
    method = klass.instance_method(name)
    file, line = method.source_location
    next if file.nil? || !File.expand_path(file).start_with?(File.expand_path(root))
    spec_name = name.sub(/\Atest_\d{4}_/, "")
    tests << { file: Truth.relative(file, root), line: line,
               name: spec_name == name ? name : spec_name,
               status: Truth.runtime(method) || "active" }
  end
end
# Test methods of a helper module the test classes include (highline's
# string_methods.rb) are written in a file the TestTask does not run: not test files.
listed = files.map { |f| Truth.relative(f, root) }
kept, dropped = tests.partition { |t| listed.include?(t[:file]) }
warn "truth: #{dropped.size} test methods outside the test files (#{dropped.map { |t| t[:file] }.uniq.join(", ")})"
Truth.write(kept, count, out)
exit!(0) # no at_exit runner
