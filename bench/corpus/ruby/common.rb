# Shared by rspec_truth.rb and minitest_truth.rb: ADR 0005's runtime-skip rule on a
# test's body, read from Ruby's own parser (RubyVM::AbstractSyntaxTree), and the output.
require "json"

module Truth
  RUNTIME = { skip: "skipped", pending: "xfail" }.freeze

  # The status a top-level `skip`/`pending` statement of the body gives, or nil.
  def self.runtime(callable)
    node = RubyVM::AbstractSyntaxTree.of(callable)
    return nil if node.nil?
    body = node.type == :ITER ? node.children[1] : node
    body = body.children[2] if body && body.type == :SCOPE
    statements = body && body.type == :BLOCK ? body.children : [body]
    statements.each do |s|
      next unless s.is_a?(RubyVM::AbstractSyntaxTree::Node)
      name = case s.type
             when :VCALL then s.children[0]
             when :FCALL then s.children[0]
             end
      return RUNTIME[name] if RUNTIME.key?(name)
    end
    nil
  rescue StandardError, ArgumentError
    nil
  end

  def self.relative(path, root)
    File.expand_path(path).delete_prefix(File.expand_path(root) + "/")
  end

  def self.write(tests, runner_count, out)
    seen = {}
    unique = tests.select { |t| seen[[t[:file], t[:line]]] ? false : (seen[[t[:file], t[:line]]] = true) }
    File.write(out, JSON.generate({ "runner_count" => runner_count,
                                    "tests" => unique.sort_by { |t| [t[:file], t[:line]] } }))
  end
end

# A library the project's tests load that is not installed here (no network for gems):
# its require is a no-op and its constants are inert stubs, named on stderr. Listing
# tests only defines them; nothing of the library runs.
module Truth
  class Stub < Module
    def method_missing(*, **) = self
    def respond_to_missing?(*) = true
    def const_missing(name) = const_set(name, Stub.new)
  end
end

module Kernel
  alias_method :truth_require, :require
  private :truth_require

  def require(name)
    return false if name == "bundler/setup" # the Gemfile's gems are not all here
    truth_require(name)
  rescue LoadError
    warn "truth: stubbed require #{name}"
    # The warning gem extends a core module: its calls become no-ops.
    Warning.define_singleton_method(:ignore) { |*| nil } if name == "warning"
    # With TRUTH_DEFINE_STUBBED=1 (i18n), its top constant too, so that classes guarded
    # by `defined?(ActiveSupport)` still define their tests; off by default, as other
    # gems' own `defined?(Typhoeus)` checks (webmock's) would then use the stub.
    top = name.split("/").first.split("_").map(&:capitalize).join
    if ENV["TRUTH_DEFINE_STUBBED"] == "1" && top.match?(/\A[A-Z]\w*\z/) && !Object.const_defined?(top)
      Object.const_set(top, Truth::Stub.new)
    end
    false
  end
  private :require
end

class Module
  STDLIB = { DateTime: "date", BigDecimal: "bigdecimal", Date: "date", Set: "set" }.freeze

  def const_missing(name)
    # A standard library class used before its require (Date): load it, never stub it.
    if STDLIB.key?(name)
      truth_require(STDLIB[name])
      return Object.const_get(name)
    end
    warn "truth: stubbed constant #{name}"
    Object.const_set(name, Truth::Stub.new)
  end
end
