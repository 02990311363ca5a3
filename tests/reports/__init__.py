"""Tests of skillab.reports."""
