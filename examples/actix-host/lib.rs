//! The package of the actix-web mounting example (`actix.rs` beside this
//! file): it holds no library code. Run the example with
//! `cargo run -p a2a-tower-example-actix --example actix`.
