//! A gRPC status as an [`A2aError`]: the kind from the `google.rpc.ErrorInfo`
//! of domain `a2a-protocol.org` in `grpc-status-details-bin` (its reason),
//! else from the status code; the message when it is not the kind's
//! default; the ErrorInfo's metadata and the `google.rpc.BadRequest`'s field
//! violations.

use prost::Message as _;
use tonic::Code;

use super::proto::rpc;
use a2a_tower_core::ERROR_DOMAIN;

use crate::{A2aError, ErrorKind};

/// `type_url` of the ErrorInfo detail.
const ERROR_INFO_TYPE: &str = "type.googleapis.com/google.rpc.ErrorInfo";
/// `type_url` of the BadRequest detail.
const BAD_REQUEST_TYPE: &str = "type.googleapis.com/google.rpc.BadRequest";

/// The kind of a status without an A2A ErrorInfo, by its code.
fn by_code(code: Code) -> ErrorKind {
    match code {
        Code::InvalidArgument => ErrorKind::InvalidParams,
        Code::NotFound => ErrorKind::TaskNotFound,
        Code::Unimplemented => ErrorKind::UnsupportedOperation,
        Code::Unauthenticated => ErrorKind::Unauthenticated,
        Code::PermissionDenied => ErrorKind::PermissionDenied,
        Code::ResourceExhausted => ErrorKind::PayloadTooLarge,
        Code::Unavailable | Code::DeadlineExceeded | Code::Cancelled => ErrorKind::Unavailable,
        _ => ErrorKind::Internal,
    }
}

/// The error of a status the agent (or the connection) answered.
pub(crate) fn error(status: &tonic::Status) -> A2aError {
    let details = rpc::Status::decode(status.details()).unwrap_or_default();
    let (mut info, mut bad) = (None, None);
    for any in &details.details {
        match any.type_url.as_str() {
            ERROR_INFO_TYPE => info = rpc::ErrorInfo::decode(&any.value[..]).ok(),
            BAD_REQUEST_TYPE => bad = rpc::BadRequest::decode(&any.value[..]).ok(),
            _ => {}
        }
    }
    let info = info.filter(|i| i.domain == ERROR_DOMAIN);
    let kind = info
        .as_ref()
        .and_then(|i| ErrorKind::from_reason(&i.reason))
        .unwrap_or_else(|| by_code(status.code()));
    let mut err = A2aError::new(kind);
    if !status.message().is_empty() && status.message() != kind.default_message() {
        err = err.with_message(status.message().to_owned());
    }
    for (k, v) in info.iter().flat_map(|i| &i.metadata) {
        err = err.with_metadata(k.clone(), v.clone());
    }
    for v in bad.iter().flat_map(|b| &b.field_violations) {
        err = err.with_violation(v.field.clone(), v.description.clone());
    }
    err
}

#[cfg(test)]
mod tests {
    use super::*;

    fn any(type_url: &str, m: &impl prost::Message) -> pbjson_types::Any {
        pbjson_types::Any {
            type_url: type_url.into(),
            value: m.encode_to_vec().into(),
        }
    }

    #[test]
    fn reason_metadata_and_violations() {
        let info = rpc::ErrorInfo {
            reason: "TASK_NOT_FOUND".into(),
            domain: ERROR_DOMAIN.into(),
            metadata: [("taskId".to_owned(), "t-1".to_owned())].into(),
        };
        let bad = rpc::BadRequest {
            field_violations: vec![rpc::bad_request::FieldViolation {
                field: "id".into(),
                description: "is required".into(),
                ..Default::default()
            }],
        };
        let details = rpc::Status {
            code: Code::NotFound as i32,
            message: "gone".into(),
            details: vec![any(ERROR_INFO_TYPE, &info), any(BAD_REQUEST_TYPE, &bad)],
        };
        let status =
            tonic::Status::with_details(Code::NotFound, "gone", details.encode_to_vec().into());
        let err = error(&status);
        assert_eq!(err.kind(), ErrorKind::TaskNotFound);
        assert_eq!(err.message(), "gone");
        assert_eq!(
            err.metadata().get("taskId").map(String::as_str),
            Some("t-1")
        );
        assert_eq!(
            err.violations()[0],
            ("id".to_owned(), "is required".to_owned())
        );
        // Another domain's reason, or none: the code decides.
        let other = rpc::ErrorInfo {
            reason: "TASK_NOT_FOUND".into(),
            domain: "example.com".into(),
            ..Default::default()
        };
        let details = rpc::Status {
            details: vec![any(ERROR_INFO_TYPE, &other)],
            ..Default::default()
        };
        let status = tonic::Status::with_details(
            Code::FailedPrecondition,
            "",
            details.encode_to_vec().into(),
        );
        assert_eq!(error(&status).kind(), ErrorKind::Internal);
        assert_eq!(
            error(&tonic::Status::unavailable("down")).kind(),
            ErrorKind::Unavailable
        );
    }
}
