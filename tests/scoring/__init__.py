"""Tests of skillab.scoring."""
