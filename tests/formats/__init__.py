"""Tests of skillab.formats."""
