"""Support code shared by the test modules (imported as ``tests.support.*``; the checkout is on the
import path through pytest's ``pythonpath`` setting)."""
