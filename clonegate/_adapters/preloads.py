"""What each adapter's worker jobs import, by name (ADR 0003).

The workers' zygote imports these before it forks any worker, so that no job imports
anything. Only strings here: the command line reads this module to start a zygote
before it imports the adapters (or trio) itself.
"""

# What a clone (or a remote HEAD listing) imports, lazily (the parent imports
# clone_worker and head_worker for their job types and entry points alone). Not
# ``dulwich.porcelain`` (~20 ms of every zygote's start): only the update of a kept
# clone with a working tree uses it, and a served worker imports it once (~3 MiB,
# counted in that first update's peak).
CLONE_MODULES = (
    "clonegate._adapters.git.clone_worker",
    "clonegate._adapters.git.head_worker",
    "clonegate._adapters.git.pack_intake",
    "dulwich.client",
    "dulwich.commit_graph",
    "dulwich.config",
    "dulwich.errors",
    "dulwich.index",
    "dulwich.pack",
    "dulwich.refs",
    "dulwich.repo",
    "dulwich.trailers",
    "dulwich.worktree",
    "encodings.idna",
    "ssl",
    "urllib.request",
    "urllib3",
)
# What a scan imports lazily (every worker is a fork of the zygote, and would
# otherwise import these again for each job).
SCAN_MODULES = (
    # The grammars' modules, not their parsers and queries (~30 ms of every zygote's
    # start, ~7 MiB): a worker builds those of the languages it meets, once (served).
    "clonegate._adapters.analysis.scan",
    "tree_sitter_cpp",
    "tree_sitter_c_sharp",
    "tree_sitter_go",
    "tree_sitter_java",
    "tree_sitter_javascript",
    "tree_sitter_kotlin",
    "tree_sitter_php",
    "tree_sitter_ruby",
    "tree_sitter_rust",
    "tree_sitter_swift",
    "tree_sitter_typescript",
    "dulwich.object_store",
    "dulwich.objects",
)
# The one declared list: what every zygote imports (both adapters' jobs). Not grown by
# imports: a zygote started by the command line before it imports anything (ADR 0003)
# and one started by a pool preload the same modules, so the first can be adopted.
# The clone's first: the command line's first clone starts once they are in (issue 47).
ZYGOTE_PRELOAD = CLONE_MODULES + SCAN_MODULES
