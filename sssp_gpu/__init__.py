"""GPU single-source shortest paths for CS 515 Project 2: the engine behind ./sssp."""
