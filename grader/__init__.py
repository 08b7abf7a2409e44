"""The grading harness: graphs, reference answers, sweeps over the program under test."""
