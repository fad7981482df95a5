"""Helpers the tests import (fakes at the edges, scripted replies, fixture data); test modules
import from here, never from each other or from conftest."""
