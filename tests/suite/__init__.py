"""Tests of skillab.suite."""
