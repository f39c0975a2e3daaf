//! [`A2aError`] as a gRPC status: the code from the error table, the safe
//! message, and a `google.rpc.Status` in `grpc-status-details-bin` carrying
//! the `google.rpc.ErrorInfo` (reason, domain `a2a-protocol.org`, metadata)
//! first and a `google.rpc.BadRequest` when the error has field violations
//! (the order a2a-python writes). Other `details` objects of an error
//! ([`A2aError::with_detail`]) are JSON and stay off the gRPC wire.

use http::{HeaderMap, Response};
use prost::Message as _;
use tonic::Code;

use super::rpc;
use crate::{A2aError, Body, ERROR_DOMAIN, ErrorKind};

/// `type_url` of the ErrorInfo detail.
const ERROR_INFO_TYPE: &str = "type.googleapis.com/google.rpc.ErrorInfo";
/// `type_url` of the BadRequest detail.
const BAD_REQUEST_TYPE: &str = "type.googleapis.com/google.rpc.BadRequest";

/// The gRPC codes by their `google.rpc.Code` names (the error table's
/// gRPC column).
const CODES: &[(&str, Code)] = &[
    ("OK", Code::Ok),
    ("CANCELLED", Code::Cancelled),
    ("UNKNOWN", Code::Unknown),
    ("INVALID_ARGUMENT", Code::InvalidArgument),
    ("DEADLINE_EXCEEDED", Code::DeadlineExceeded),
    ("NOT_FOUND", Code::NotFound),
    ("ALREADY_EXISTS", Code::AlreadyExists),
    ("PERMISSION_DENIED", Code::PermissionDenied),
    ("RESOURCE_EXHAUSTED", Code::ResourceExhausted),
    ("FAILED_PRECONDITION", Code::FailedPrecondition),
    ("ABORTED", Code::Aborted),
    ("OUT_OF_RANGE", Code::OutOfRange),
    ("UNIMPLEMENTED", Code::Unimplemented),
    ("INTERNAL", Code::Internal),
    ("UNAVAILABLE", Code::Unavailable),
    ("DATA_LOSS", Code::DataLoss),
    ("UNAUTHENTICATED", Code::Unauthenticated),
];

/// The gRPC code of `kind`, from the error table.
pub(crate) fn code(kind: ErrorKind) -> Code {
    let name = kind.grpc_status();
    CODES
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(Code::Internal, |(_, c)| *c)
}

/// The `google.rpc.Status` of `err`.
pub(crate) fn rpc_status(err: &A2aError) -> rpc::Status {
    let info = rpc::ErrorInfo {
        reason: err.kind().reason().to_owned(),
        domain: ERROR_DOMAIN.to_owned(),
        metadata: err
            .metadata()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    };
    let mut details = vec![any(ERROR_INFO_TYPE, &info)];
    if !err.violations().is_empty() {
        let bad = rpc::BadRequest {
            field_violations: err
                .violations()
                .iter()
                .map(|(field, description)| rpc::bad_request::FieldViolation {
                    field: field.clone(),
                    description: description.clone(),
                    ..Default::default()
                })
                .collect(),
        };
        details.push(any(BAD_REQUEST_TYPE, &bad));
    }
    rpc::Status {
        code: code(err.kind()) as i32,
        message: err.message().to_owned(),
        details,
    }
}

fn any(type_url: &str, message: &impl prost::Message) -> pbjson_types::Any {
    pbjson_types::Any {
        type_url: type_url.to_owned(),
        value: message.encode_to_vec().into(),
    }
}

/// The tonic status of `err`, with the `google.rpc.Status` details.
pub(crate) fn to_status(err: &A2aError) -> tonic::Status {
    let details = rpc_status(err).encode_to_vec();
    tonic::Status::with_details(code(err.kind()), err.message(), details.into())
}

/// A trailers-only gRPC response (HTTP 200, `application/grpc`, the status
/// in the headers): how the edge layers refuse a gRPC request.
pub(crate) fn error_response(err: &A2aError) -> Response<Body> {
    to_status(err).into_http()
}

/// The request is a gRPC call: `Content-Type: application/grpc` or
/// `application/grpc+<codec>`.
pub(crate) fn is_grpc(headers: &HeaderMap) -> bool {
    let Some(ct) = headers.get(http::header::CONTENT_TYPE) else {
        return false;
    };
    let ct = ct.as_bytes();
    ct.get(..16)
        .is_some_and(|p| p.eq_ignore_ascii_case(b"application/grpc"))
        && matches!(ct.get(16), None | Some(b'+' | b';'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    #[test]
    fn every_kind_has_its_table_code() {
        for kind in ErrorKind::ALL {
            let c = code(*kind);
            let name = CODES.iter().find(|(_, x)| *x == c).unwrap().0;
            assert_eq!(name, kind.grpc_status(), "{kind}");
        }
    }

    #[test]
    fn details_carry_error_info_then_bad_request() {
        let err = A2aError::invalid_params("message.parts", "must not be empty")
            .with_metadata("taskId", "t-1");
        let status = to_status(&err);
        assert_eq!(status.code(), Code::InvalidArgument);
        assert_eq!(status.message(), err.message());
        let decoded = rpc::Status::decode(status.details()).unwrap();
        assert_eq!(decoded.code, Code::InvalidArgument as i32);
        assert_eq!(decoded.details.len(), 2);
        assert_eq!(decoded.details[0].type_url, ERROR_INFO_TYPE);
        let info = rpc::ErrorInfo::decode(&decoded.details[0].value[..]).unwrap();
        assert_eq!(info.reason, "INVALID_PARAMS");
        assert_eq!(info.domain, ERROR_DOMAIN);
        assert_eq!(info.metadata["taskId"], "t-1");
        let bad = rpc::BadRequest::decode(&decoded.details[1].value[..]).unwrap();
        assert_eq!(bad.field_violations[0].field, "message.parts");
        let plain = rpc_status(&A2aError::task_not_found("t"));
        assert_eq!(plain.details.len(), 1);
    }

    #[test]
    fn trailers_only_response() {
        let res = error_response(&A2aError::new(ErrorKind::VersionNotSupported));
        assert_eq!(res.status(), http::StatusCode::OK);
        assert_eq!(res.headers()["content-type"], "application/grpc");
        assert_eq!(res.headers()["grpc-status"], "9");
        assert!(res.headers().contains_key("grpc-status-details-bin"));
    }

    #[test]
    fn grpc_content_types() {
        let of = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert(
                http::header::CONTENT_TYPE,
                HeaderValue::from_str(v).unwrap(),
            );
            is_grpc(&h)
        };
        assert!(of("application/grpc"));
        assert!(of("application/grpc+proto"));
        assert!(of("Application/GRPC; charset=x"));
        assert!(!of("application/grpc-web"));
        assert!(!of("application/json"));
        assert!(!of("application/grp"));
        assert!(!is_grpc(&HeaderMap::new()));
    }
}
