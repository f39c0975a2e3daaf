//! [`OperationKind`]: the one table of the eleven A2A operations, one row
//! each, with `const fn` lookups. Every binding, the client and the
//! extension-method checks read an operation's facts from here.
//!
//! The table is in the docs of [`OperationKind`].
//!
//! ```
//! use a2a_tower::{HttpVerb, OperationKind};
//! let kind = OperationKind::from_method("CancelTask").unwrap();
//! assert_eq!(kind.http_routes()[0].verb, HttpVerb::Post);
//! assert_eq!(kind.http_routes()[0].path, "/tasks/{id}:cancel");
//! ```

mod cells;

use std::fmt;

pub use cells::{Capability, HttpRoute, HttpVerb, ResponseKind};

/// The prefix of every gRPC method path: the service `lf.a2a.v1.A2AService`.
macro_rules! grpc_service {
    () => {
        "/lf.a2a.v1.A2AService/"
    };
}

macro_rules! operation_table {
    (
    $(#[$doc:meta])*
    enum OperationKind;
    $(
        $(#[$m:meta])*
        $kind:ident($params:ty) {
            jsonrpc: $method:literal,
            http: [$($verb:ident $path:literal),+],
            path_params: [$($path_param:literal),*],
            grpc: $grpc:literal,
            capability: $cap:expr,
            required: [$($required:literal),*],
            response: $response:ident $(,)?
        }
    ),+ $(,)?) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum OperationKind { $( $(#[$m])* $kind ),+ }

        impl OperationKind {
            /// Every operation, in table order.
            pub const ALL: &'static [OperationKind] = &[$(OperationKind::$kind),+];

            /// The operation's name (a2a-spec.md §3).
            pub const fn name(self) -> &'static str {
                match self { $(Self::$kind => stringify!($kind)),+ }
            }

            /// The JSON-RPC method (a2a-spec.md §6.2).
            pub const fn jsonrpc_method(self) -> &'static str {
                match self { $(Self::$kind => $method),+ }
            }

            /// The HTTP+JSON routes (a2a-spec.md §7.1); the first is the one
            /// a client sends.
            pub const fn http_routes(self) -> &'static [HttpRoute] {
                match self {
                    $(Self::$kind => &[$(HttpRoute {
                        verb: HttpVerb::$verb,
                        path: $path,
                        tenant_path: concat!("/{tenant}", $path),
                    }),+]),+
                }
            }

            /// The parameters the `{…}` captures of the routes fill, in path
            /// order (`{id}` of `/tasks/{id}` is GetTask's `id`; of the push
            /// config routes, `taskId`).
            pub const fn path_params(self) -> &'static [&'static str] {
                match self { $(Self::$kind => &[$($path_param),*]),+ }
            }

            /// The gRPC method of `lf.a2a.v1.A2AService` (a2a-spec.md §8).
            pub const fn grpc_method(self) -> &'static str {
                match self { $(Self::$kind => $grpc),+ }
            }

            /// The gRPC method's path (`/lf.a2a.v1.A2AService/GetTask`).
            pub const fn grpc_path(self) -> &'static str {
                match self { $(Self::$kind => concat!(grpc_service!(), $grpc)),+ }
            }

            /// The card capability the operation needs, if any (a2a-spec.md §4.8).
            pub const fn capability(self) -> Option<Capability> {
                match self { $(Self::$kind => $cap),+ }
            }

            /// The parameters a2a-spec.md §3.7 marks required (camelCase);
            /// missing, they are InvalidParams.
            pub const fn required_params(self) -> &'static [&'static str] {
                match self { $(Self::$kind => &[$($required),*]),+ }
            }

            /// What the operation is answered with.
            pub const fn response(self) -> ResponseKind {
                match self { $(Self::$kind => ResponseKind::$response),+ }
            }

            /// The operation with this JSON-RPC method name (exact match).
            pub fn from_method(method: &str) -> Option<Self> {
                match method { $($method => Some(Self::$kind),)+ _ => None }
            }

            /// Decodes an operation's parameters into the typed operation.
            #[doc(hidden)]
            pub fn decode<'de, P: DecodeParams<'de>>(
                self,
                params: P,
            ) -> Result<crate::Operation, P::Error> {
                Ok(match self { $(Self::$kind => crate::Operation::$kind(params.decode::<$params>()?)),+ })
            }
        }

        impl crate::Operation {
            /// The operation's row of the operation table; `None` for an
            /// extension's method.
            ///
            /// ```
            /// use a2a_tower::{Operation, OperationKind};
            /// let op = Operation::GetTask(Default::default());
            /// assert_eq!(op.kind(), Some(OperationKind::GetTask));
            /// ```
            pub const fn kind(&self) -> Option<OperationKind> {
                match self {
                    $(Self::$kind(_) => Some(OperationKind::$kind),)+
                    Self::Extension(_) => None,
                }
            }
        }
    };
}

/// A source of one operation's parameters, decoded as the operation's
/// request type (the JSON-RPC codec's params object).
pub trait DecodeParams<'de> {
    /// The decoding error.
    type Error;
    /// Decodes the parameters as `T`.
    fn decode<T: serde::Deserialize<'de>>(self) -> Result<T, Self::Error>;
}

use crate::types::{
    CancelTaskRequest, DeleteTaskPushNotificationConfigRequest, GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest,
    ListTasksRequest, SendMessageRequest, SubscribeToTaskRequest, TaskPushNotificationConfig,
};

operation_table! {
    /// One of the eleven A2A operations, as a row of the operation table;
    /// [`Operation::kind`](crate::Operation::kind) gives the row of a
    /// decoded operation.
    ///
    /// | operation | JSON-RPC method | HTTP+JSON | gRPC method | capability | required | answer |
    /// |---|---|---|---|---|---|---|
    /// | SendMessage | `SendMessage` | `POST /message:send` | `SendMessage` | — | `message` | `SendMessage` |
    /// | SendStreamingMessage | `SendStreamingMessage` | `POST /message:stream` | `SendStreamingMessage` | `streaming` | `message` | `Stream` |
    /// | GetTask | `GetTask` | `GET /tasks/{id}` | `GetTask` | — | `id` | `Task` |
    /// | ListTasks | `ListTasks` | `GET /tasks` | `ListTasks` | — | — | `Tasks` |
    /// | CancelTask | `CancelTask` | `POST /tasks/{id}:cancel` | `CancelTask` | — | `id` | `Task` |
    /// | SubscribeToTask | `SubscribeToTask` | `POST /tasks/{id}:subscribe`, `GET /tasks/{id}:subscribe` | `SubscribeToTask` | `streaming` | `id` | `Stream` |
    /// | CreateTaskPushNotificationConfig | `CreateTaskPushNotificationConfig` | `POST /tasks/{id}/pushNotificationConfigs` | `CreateTaskPushNotificationConfig` | `pushNotifications` | `taskId`, `url` | `PushConfig` |
    /// | GetTaskPushNotificationConfig | `GetTaskPushNotificationConfig` | `GET /tasks/{id}/pushNotificationConfigs/{configId}` | `GetTaskPushNotificationConfig` | `pushNotifications` | `taskId`, `id` | `PushConfig` |
    /// | ListTaskPushNotificationConfigs | `ListTaskPushNotificationConfigs` | `GET /tasks/{id}/pushNotificationConfigs` | `ListTaskPushNotificationConfigs` | `pushNotifications` | `taskId` | `PushConfigs` |
    /// | DeleteTaskPushNotificationConfig | `DeleteTaskPushNotificationConfig` | `DELETE /tasks/{id}/pushNotificationConfigs/{configId}` | `DeleteTaskPushNotificationConfig` | `pushNotifications` | `taskId`, `id` | `Empty` |
    /// | GetExtendedAgentCard | `GetExtendedAgentCard` | `GET /extendedAgentCard` | `GetExtendedAgentCard` | `extendedAgentCard` | — | `AgentCard` |
    ///
    /// Every HTTP+JSON route also exists under one `/{tenant}` segment
    /// ([`HttpRoute::tenant_path`]); a route's `{…}` captures fill the
    /// parameters [`OperationKind::path_params`] names, in order. The gRPC
    /// methods are those of `lf.a2a.v1.A2AService` ([`OperationKind::grpc_path`]).
    /// The table above is checked against the rows by a unit test.
    ///
    /// ```
    /// use a2a_tower::{Capability, HttpVerb, Operation, OperationKind, ResponseKind};
    /// use a2a_tower::types::SubscribeToTaskRequest;
    ///
    /// let kind = OperationKind::from_method("SubscribeToTask").unwrap();
    /// assert_eq!(kind, OperationKind::SubscribeToTask);
    /// assert_eq!(kind.http_routes()[0].verb, HttpVerb::Post);
    /// assert_eq!(kind.http_routes()[0].path, "/tasks/{id}:subscribe");
    /// assert_eq!(kind.http_routes()[0].tenant_path, "/{tenant}/tasks/{id}:subscribe");
    /// assert_eq!(kind.grpc_path(), "/lf.a2a.v1.A2AService/SubscribeToTask");
    /// assert_eq!(kind.capability(), Some(Capability::Streaming));
    /// assert_eq!(kind.required_params(), ["id"]);
    /// assert_eq!(kind.response(), ResponseKind::Stream);
    /// assert!(kind.is_streaming());
    /// let op = Operation::SubscribeToTask(SubscribeToTaskRequest::default());
    /// assert_eq!(op.kind(), Some(kind));
    /// assert_eq!(OperationKind::ALL.len(), 11);
    /// ```
    enum OperationKind;

    /// SendMessage: a message in, a task or a message out.
    SendMessage(SendMessageRequest) {
        jsonrpc: "SendMessage",
        http: [Post "/message:send"],
        path_params: [],
        grpc: "SendMessage",
        capability: None,
        required: ["message"],
        response: SendMessage,
    },
    /// SendStreamingMessage: a message in, a stream of events out.
    SendStreamingMessage(SendMessageRequest) {
        jsonrpc: "SendStreamingMessage",
        http: [Post "/message:stream"],
        path_params: [],
        grpc: "SendStreamingMessage",
        capability: Some(Capability::Streaming),
        required: ["message"],
        response: Stream,
    },
    /// GetTask.
    GetTask(GetTaskRequest) {
        jsonrpc: "GetTask",
        http: [Get "/tasks/{id}"],
        path_params: ["id"],
        grpc: "GetTask",
        capability: None,
        required: ["id"],
        response: Task,
    },
    /// ListTasks.
    ListTasks(ListTasksRequest) {
        jsonrpc: "ListTasks",
        http: [Get "/tasks"],
        path_params: [],
        grpc: "ListTasks",
        capability: None,
        required: [],
        response: Tasks,
    },
    /// CancelTask.
    CancelTask(CancelTaskRequest) {
        jsonrpc: "CancelTask",
        http: [Post "/tasks/{id}:cancel"],
        path_params: ["id"],
        grpc: "CancelTask",
        capability: None,
        required: ["id"],
        response: Task,
    },
    /// SubscribeToTask: the task's events. Over HTTP+JSON both POST (the
    /// spec text) and GET (the proto) are served.
    SubscribeToTask(SubscribeToTaskRequest) {
        jsonrpc: "SubscribeToTask",
        http: [Post "/tasks/{id}:subscribe", Get "/tasks/{id}:subscribe"],
        path_params: ["id"],
        grpc: "SubscribeToTask",
        capability: Some(Capability::Streaming),
        required: ["id"],
        response: Stream,
    },
    /// CreateTaskPushNotificationConfig.
    CreateTaskPushNotificationConfig(TaskPushNotificationConfig) {
        jsonrpc: "CreateTaskPushNotificationConfig",
        http: [Post "/tasks/{id}/pushNotificationConfigs"],
        path_params: ["taskId"],
        grpc: "CreateTaskPushNotificationConfig",
        capability: Some(Capability::PushNotifications),
        required: ["taskId", "url"],
        response: PushConfig,
    },
    /// GetTaskPushNotificationConfig.
    GetTaskPushNotificationConfig(GetTaskPushNotificationConfigRequest) {
        jsonrpc: "GetTaskPushNotificationConfig",
        http: [Get "/tasks/{id}/pushNotificationConfigs/{configId}"],
        path_params: ["taskId", "id"],
        grpc: "GetTaskPushNotificationConfig",
        capability: Some(Capability::PushNotifications),
        required: ["taskId", "id"],
        response: PushConfig,
    },
    /// ListTaskPushNotificationConfigs.
    ListTaskPushNotificationConfigs(ListTaskPushNotificationConfigsRequest) {
        jsonrpc: "ListTaskPushNotificationConfigs",
        http: [Get "/tasks/{id}/pushNotificationConfigs"],
        path_params: ["taskId"],
        grpc: "ListTaskPushNotificationConfigs",
        capability: Some(Capability::PushNotifications),
        required: ["taskId"],
        response: PushConfigs,
    },
    /// DeleteTaskPushNotificationConfig.
    DeleteTaskPushNotificationConfig(DeleteTaskPushNotificationConfigRequest) {
        jsonrpc: "DeleteTaskPushNotificationConfig",
        http: [Delete "/tasks/{id}/pushNotificationConfigs/{configId}"],
        path_params: ["taskId", "id"],
        grpc: "DeleteTaskPushNotificationConfig",
        capability: Some(Capability::PushNotifications),
        required: ["taskId", "id"],
        response: Empty,
    },
    /// GetExtendedAgentCard.
    GetExtendedAgentCard(GetExtendedAgentCardRequest) {
        jsonrpc: "GetExtendedAgentCard",
        http: [Get "/extendedAgentCard"],
        path_params: [],
        grpc: "GetExtendedAgentCard",
        capability: Some(Capability::ExtendedAgentCard),
        required: [],
        response: AgentCard,
    },
}

impl OperationKind {
    /// The operation answers with a stream of events.
    pub const fn is_streaming(self) -> bool {
        matches!(self.response(), ResponseKind::Stream)
    }
}

impl fmt::Display for OperationKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The HTTP+JSON column of the table in the docs: every route.
    fn http_column(kind: OperationKind) -> String {
        let routes: Vec<String> = kind
            .http_routes()
            .iter()
            .map(|r| format!("`{} {}`", r.verb, r.path))
            .collect();
        routes.join(", ")
    }

    fn row(kind: OperationKind) -> String {
        let list = |items: &[&str]| {
            if items.is_empty() {
                "—".to_owned()
            } else {
                let quoted: Vec<String> = items.iter().map(|i| format!("`{i}`")).collect();
                quoted.join(", ")
            }
        };
        let cap = kind.capability().map(|c| c.field());
        format!(
            "| {} | `{}` | {} | `{}` | {} | {} | `{:?}` |",
            kind.name(),
            kind.jsonrpc_method(),
            http_column(kind),
            kind.grpc_method(),
            list(cap.as_slice()),
            list(kind.required_params()),
            kind.response(),
        )
    }

    #[test]
    fn the_module_doc_table_is_the_table() {
        let source = include_str!("mod.rs");
        let doc: Vec<&str> = source
            .lines()
            .filter_map(|l| l.strip_prefix("    /// | "))
            .skip(1)
            .collect();
        let rows: Vec<String> = OperationKind::ALL.iter().map(|k| row(*k)).collect();
        let doc: Vec<String> = doc.iter().map(|l| format!("| {l}")).collect();
        assert_eq!(doc.len(), OperationKind::ALL.len());
        assert_eq!(doc, rows);
    }

    #[test]
    fn names_methods_and_kinds_agree() {
        for &kind in OperationKind::ALL {
            assert_eq!(
                OperationKind::from_method(kind.jsonrpc_method()),
                Some(kind)
            );
            assert!(kind.grpc_path().ends_with(kind.grpc_method()));
            for route in kind.http_routes() {
                assert_eq!(route.tenant_path, format!("/{{tenant}}{}", route.path));
                let captures = route.path.matches('{').count();
                assert_eq!(captures, kind.path_params().len(), "{kind}");
            }
            // Streaming answers need the streaming capability.
            assert_eq!(
                kind.is_streaming(),
                kind.capability() == Some(Capability::Streaming),
                "{kind}"
            );
        }
        assert_eq!(OperationKind::from_method("getTask"), None);
    }

    #[test]
    fn capabilities_and_their_errors() {
        assert_eq!(
            Capability::PushNotifications.missing_error().jsonrpc_code(),
            -32003
        );
        assert_eq!(Capability::Streaming.missing_error().jsonrpc_code(), -32004);
        assert_eq!(
            Capability::ExtendedAgentCard.missing_error().jsonrpc_code(),
            -32004
        );
    }
}
