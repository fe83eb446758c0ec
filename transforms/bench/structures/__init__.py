"""One module per data structure: reference implementation, generator and prompt parts."""
