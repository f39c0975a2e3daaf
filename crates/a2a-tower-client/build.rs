//! Generates the gRPC transport's client code from `proto/` when the `grpc`
//! feature is on (`CARGO_FEATURE_GRPC`); otherwise does nothing. No `protoc`
//! is needed: protox compiles the protos in Rust.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "grpc")]
    if std::env::var_os("CARGO_FEATURE_GRPC").is_some() {
        grpc::generate();
    }
}

#[cfg(feature = "grpc")]
mod grpc {
    use std::path::PathBuf;

    /// The protos compiled, relative to `proto/`: the A2A service and the
    /// `google.rpc` error details the servers write.
    const FILES: &[&str] = &[
        "a2a.proto",
        "google/rpc/status.proto",
        "google/rpc/error_details.proto",
    ];

    pub(super) fn generate() {
        println!("cargo:rerun-if-changed=proto");
        let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
        let mut compiler = protox::Compiler::new(["proto"]).expect("proto/ is readable");
        compiler.include_imports(true).include_source_info(true);
        compiler
            .open_files(FILES)
            .unwrap_or_else(|e| panic!("proto/: {e}"));
        let bytes = compiler.encode_file_descriptor_set();
        let fds = compiler.file_descriptor_set();
        let mut config = tonic_prost_build::Config::new();
        config.disable_comments([".google.rpc", ".lf.a2a.v1"]);
        tonic_prost_build::configure()
            .build_server(false)
            .build_client(true)
            .build_transport(false)
            .compile_well_known_types(true)
            .extern_path(".google.protobuf", "::pbjson_types")
            .out_dir(&out)
            .compile_fds_with_config(fds, config)
            .unwrap_or_else(|e| panic!("generating the gRPC code: {e}"));
        pbjson_build::Builder::new()
            .register_descriptors(&bytes)
            .expect("the descriptor set protox wrote decodes")
            .out_dir(&out)
            // Fields of the crate's types beyond the proto's are dropped.
            .ignore_unknown_fields()
            .build(&[".lf.a2a.v1"])
            .unwrap_or_else(|e| panic!("generating the ProtoJSON serde: {e}"));
    }
}
