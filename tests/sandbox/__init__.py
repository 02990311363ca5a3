"""Tests of skillab.sandbox."""
