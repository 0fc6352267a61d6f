"""Model tests; a package so that its test files may share basenames with tests/encodings (test_typed_policy.py)."""
