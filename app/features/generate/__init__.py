"""File ▸ Generate network file: the generated road network of any size, written to a file."""
