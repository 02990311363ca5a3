"""Tests of skillab.engine."""
