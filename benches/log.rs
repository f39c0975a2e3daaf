//! Task log append/project benchmarks (see the engine branch).
fn main() {}
