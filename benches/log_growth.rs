//! Growth of the memory task log (see the engine branch).
fn main() {}
