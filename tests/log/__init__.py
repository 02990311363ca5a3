"""Tests of skillab.log."""
