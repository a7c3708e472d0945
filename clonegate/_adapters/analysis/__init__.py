"""The test-inventory analyzer: an adapter behind the domain's ``Analyzer`` port."""
