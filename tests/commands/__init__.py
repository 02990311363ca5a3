"""Tests of skillab.commands."""
