//! Placeholder benchmark (edge); filled in by its own task.

fn main() {}
