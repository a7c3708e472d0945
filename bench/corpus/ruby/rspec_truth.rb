# Lists every RSpec example definition of a project: ruby rspec_truth.rb ROOT OUT [rspec args]
# Loads the spec files as `rspec --dry-run` does (the project's .rspec), then walks every
# example group, focused or filtered out alike; an example of a shared group is counted
# once where it is written (its metadata's file_path/line_number), whatever includes it.
require "rspec/core"
require_relative "common"

root, out, *args = ARGV
Dir.chdir(root)
options = RSpec::Core::ConfigurationOptions.new(args + ["--dry-run"])
config = RSpec.configuration
runner = RSpec::Core::Runner.new(options) # the configuration's world: RSpec.world
runner.configure($stderr, $stdout)        # .rspec and its --require (spec_helper)
# As `rspec` with no path: the default path (.rspec's --default-path), with its --pattern
# and --exclude-pattern; every file found is loaded, as the runner loads it.
paths = args.select { |a| File.exist?(a) }
paths = [config.default_path] if paths.empty?
config.send(:get_files_to_run, paths).each { |f| load File.expand_path(f) }

tests = []
count = 0
walk = lambda do |group|
  group.examples.each do |ex|
    count += 1
    m = ex.metadata
    status =
      if m[:skip] == RSpec::Core::Pending::NOT_YET_IMPLEMENTED then "todo"
      elsif m[:skip] then "skipped"
      elsif m[:focus] then "focused"
      elsif m[:pending] then "xfail"
      else Truth.runtime(m[:block]) || "active"
      end
    tests << { file: Truth.relative(m[:file_path], root), line: m[:line_number],
               name: m[:description], status: status }
  end
  group.children.each { |child| walk.call(child) }
end
RSpec.world.example_groups.each { |g| walk.call(g) }
Truth.write(tests, count, out)
