//! Placeholder benchmark (codec); filled in by its own task.

fn main() {}
