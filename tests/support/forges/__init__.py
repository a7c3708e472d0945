"""Forges' list APIs on 127.0.0.1 (issue 45): GitHub, GitLab, Gitea/Forgejo and
Bitbucket Cloud, each replaying its documented answers (shapes from the fixtures in
tests/fixtures/forges/<forge>/, whose SOURCE.md names the page each follows), paged and
rate-limited as the forge does, in the test's own trio loop, recording every request.

- :mod:`.core`: the HTTP/1.1 server all four share, its record (:class:`.core.Seen`),
  rate budgets in trio time, and ETag answers;
- :mod:`.catalogue`: the repositories a server lists (:class:`.catalogue.Made`,
  deterministic by index) and how a fixture's example becomes one of them;
- :mod:`.github`, :mod:`.gitlab`, :mod:`.gitea`, :mod:`.bitbucket`: one server each;
- :mod:`.client`: the tests' urllib3 client, and page walks that fail instead of hanging.
"""
