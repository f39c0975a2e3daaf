//! Ask any A2A agent from a shell:
//!
//! ```text
//! cargo run --example ask -- CARD_URL [--transport jsonrpc|http+json|grpc] [--stream]
//!     [--task ID --context ID] [--message-id ID] [--bearer TOKEN]
//!     [--api-key KEY] [--client-id ID --client-secret SECRET] [--card-key FILE] TEXT
//! ```
//!
//! `CARD_URL` is the agent card's URL; a bare origin (`http://host:port` or
//! with a `/` path) means its `/.well-known/agent-card.json`. Every word after
//! the options is the message text, joined by single spaces. The transport is
//! the card's first supported interface unless `--transport` insists on one
//! (`grpc` needs the features `client` and `grpc`).
//!
//! - The answer's text goes to stdout: the task's artifacts (one line per
//!   artifact), or the direct reply message, or the status message when the
//!   task has no artifacts. Text parts are printed as they are, data parts as
//!   their JSON text, URL parts as the URL, raw parts as a short description.
//! - With `--stream`, the artifacts' chunks are printed as they arrive, then a
//!   newline.
//! - INPUT_REQUIRED prints the question (the status message) and
//!   `task: ID` / `context: ID` lines, and exits with status 2; answer it
//!   with `--task ID --context ID TEXT`, which continues that task.
//! - A task that ends FAILED, CANCELED or REJECTED (or needs authorization)
//!   exits with status 1, its status message on stderr; so does any error
//!   (a bad card URL, the transport, the protocol).
//! - `--message-id` sets the message's id (a fresh UUID by default).
//! - `--bearer TOKEN` sends `Authorization: Bearer TOKEN` to the card's
//!   origin (the card fetch and the calls there), never elsewhere. A 401 or
//!   403 from the agent exits with status 1, naming the scheme its
//!   `WWW-Authenticate` asks for and the card's security schemes.
//! - `--api-key KEY` sends the key where the card's `apiKeySecurityScheme`
//!   says (its header, query parameter or cookie), when a requirement of
//!   the card's `securityRequirements` is met by the key (with `--bearer`'s
//!   token for its bearer schemes), on calls to the card's origin only.
//! - `--client-id ID --client-secret SECRET` satisfy the card's OAuth 2.0
//!   schemes whose flow is `clientCredentials`: a token is fetched from the
//!   flow's `tokenUrl` (the secret goes only there) and sent as a bearer
//!   token to the card's origin, fetched again once on a 401.
//! - `--card-key FILE` (a public key as PEM, JWK or JWKS; a JWK with a
//!   `kid` must be the signature's `kid`, a PEM key is taken for any)
//!   requires the card to carry a valid signature by it: otherwise ask exits
//!   with status 1 and a message about the signature, and sends no call.
//!
//! ```text
//! cargo run --example echo &
//! cargo run --example ask -- http://127.0.0.1:8080 hello there
//! cargo run --example ask -- http://127.0.0.1:8080 --stream --transport http+json hello there
//! cargo run --example grpc --features grpc &
//! cargo run --example ask --features client,grpc -- http://127.0.0.1:8080 --transport grpc hello
//! ```
//!
//! `A2A_OTEL=stdout` exports its spans through the OpenTelemetry stdout
//! exporter; with `--features otel` every request carries the `traceparent`
//! of the root span `ask`.

#[path = "common/telemetry.rs"]
mod telemetry;

use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use a2a_tower::client::{A2aClient, HttpClient, Transport};
use a2a_tower::types::{
    GetTaskRequest, Message, Part, PartContent, SendMessageRequest, SendMessageResponse,
    StreamResponse, Task, TaskState, TaskStatus,
};
use a2a_tower::{A2aRequest, A2aResponse, ErrorKind, Operation};
use futures_util::StreamExt as _;
use tower::ServiceExt as _;

/// The usage text.
const USAGE: &str = "usage: ask CARD_URL [--transport jsonrpc|http+json|grpc] [--stream] \
[--task ID --context ID] [--message-id ID] [--bearer TOKEN] [--api-key KEY] [--client-id ID --client-secret SECRET] [--card-key FILE] TEXT";

/// The exit status of an INPUT_REQUIRED task.
const INPUT_REQUIRED: u8 = 2;

/// How often a task that is still running is polled (non-streamed sends).
const POLL: Duration = Duration::from_millis(500);

/// The parsed command line.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Args {
    card_url: String,
    transport: Option<Transport>,
    stream: bool,
    task_id: Option<String>,
    context_id: Option<String>,
    message_id: Option<String>,
    bearer: Option<String>,
    api_key: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
    card_key: Option<String>,
    text: String,
}

/// What the command line asks for.
#[derive(Debug, PartialEq, Eq)]
enum Command {
    Help,
    Ask(Box<Args>),
}

/// Parses the arguments (without the program name).
fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<Command, String> {
    let mut out = Args::default();
    let mut words: Vec<String> = Vec::new();
    let mut args = args.into_iter();
    let mut options = true;
    while let Some(arg) = args.next() {
        if !options || !arg.starts_with("--") && arg != "-h" {
            words.push(arg);
            continue;
        }
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) => (n.to_owned(), Some(v.to_owned())),
            None => (arg.clone(), None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| args.next())
                .filter(|v| !v.is_empty())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match name.as_str() {
            "--" => options = false,
            "-h" | "--help" => return Ok(Command::Help),
            "--stream" if inline.is_none() => out.stream = true,
            "--transport" => {
                let t = value("--transport")?;
                out.transport = Some(match t.to_ascii_lowercase().as_str() {
                    "jsonrpc" | "json-rpc" => Transport::JsonRpc,
                    "http+json" | "rest" => Transport::HttpJson,
                    #[cfg(feature = "grpc")]
                    "grpc" => Transport::Grpc,
                    _ => {
                        return Err(format!(
                            "unknown transport {t:?} (jsonrpc, http+json or, with the grpc feature, grpc)"
                        ));
                    }
                });
            }
            "--task" => out.task_id = Some(value("--task")?),
            "--context" => out.context_id = Some(value("--context")?),
            "--message-id" => out.message_id = Some(value("--message-id")?),
            "--bearer" => out.bearer = Some(value("--bearer")?),
            "--api-key" => out.api_key = Some(value("--api-key")?),
            "--client-id" => out.client_id = Some(value("--client-id")?),
            "--client-secret" => out.client_secret = Some(value("--client-secret")?),
            "--card-key" => out.card_key = Some(value("--card-key")?),
            _ => return Err(format!("unknown option {arg:?}")),
        }
    }
    if out.client_id.is_some() != out.client_secret.is_some() {
        return Err("--client-id and --client-secret go together".into());
    }
    let mut words = words.into_iter();
    out.card_url = words.next().ok_or("the card URL is missing")?;
    out.text = words.collect::<Vec<_>>().join(" ");
    if out.text.is_empty() {
        return Err("the message text is missing".into());
    }
    Ok(Command::Ask(Box::new(out)))
}

/// The card URL of `url`: a bare origin means its well-known card path.
fn card_url(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    match rest.find('/') {
        None => format!("{url}/.well-known/agent-card.json"),
        Some(i) if &rest[i..] == "/" => format!("{url}.well-known/agent-card.json"),
        Some(_) => url.to_owned(),
    }
}

/// One part as text: text as is, data as its JSON text, a URL as itself,
/// raw bytes as a short description.
fn part_text(part: &Part) -> String {
    match &part.content {
        PartContent::Text(t) => t.clone(),
        PartContent::Data(v) => v.to_string(),
        PartContent::Url(u) => u.clone(),
        PartContent::Raw(b) => {
            let mut s = format!("[{} bytes", b.len());
            for extra in [&part.filename, &part.media_type] {
                if !extra.is_empty() {
                    s.push_str(", ");
                    s.push_str(extra);
                }
            }
            s.push(']');
            s
        }
    }
}

/// Parts as text: consecutive text parts are concatenated (chunks), any
/// other part stands on its own line.
fn parts_text(parts: &[Part]) -> String {
    let mut out = String::new();
    let mut last_text = None;
    for p in parts {
        let is_text = matches!(p.content, PartContent::Text(_));
        if last_text.is_some_and(|prev| !(prev && is_text)) {
            out.push('\n');
        }
        out.push_str(&part_text(p));
        last_text = Some(is_text);
    }
    out
}

/// The status message's text (empty without one).
fn status_text(status: &TaskStatus) -> String {
    status
        .message
        .as_ref()
        .map(|m| parts_text(&m.parts))
        .unwrap_or_default()
}

/// A task's answer: its artifacts' text, one line each, or else its status
/// message's.
fn task_text(task: &Task) -> String {
    if task.artifacts.is_empty() {
        return status_text(&task.status);
    }
    task.artifacts
        .iter()
        .map(|a| parts_text(&a.parts))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The lines printed for an INPUT_REQUIRED task: the question, then the ids.
fn question_lines(task_id: &str, context_id: &str, status: &TaskStatus) -> String {
    let mut out = status_text(status);
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&format!("task: {task_id}\ncontext: {context_id}\n"));
    out
}

/// How a task's final state is reported, and the exit status.
fn finish(task_id: &str, context_id: &str, status: &TaskStatus) -> ExitCode {
    match status.state {
        TaskState::Completed => ExitCode::SUCCESS,
        TaskState::InputRequired => {
            print!("{}", question_lines(task_id, context_id, status));
            ExitCode::from(INPUT_REQUIRED)
        }
        state => {
            let what = match state {
                TaskState::Failed => "failed",
                TaskState::Canceled => "was canceled",
                TaskState::Rejected => "was rejected",
                TaskState::AuthRequired => "needs authorization",
                _ => "ended in an unknown state",
            };
            eprintln!("the task {what}: {}", status_text(status));
            eprintln!("task: {task_id}\ncontext: {context_id}");
            ExitCode::FAILURE
        }
    }
}

/// Whether a task in `state` is done with this call (ended or waiting).
fn settled(state: TaskState) -> bool {
    state.is_terminal() || state.is_interrupted()
}

type Client = A2aClient<HttpClient>;

/// The outgoing message.
fn message(args: &Args) -> Message {
    let id = args
        .message_id
        .clone()
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let mut m = Message::user(id, args.text.clone());
    m.task_id = args.task_id.clone().unwrap_or_default();
    m.context_id = args.context_id.clone().unwrap_or_default();
    m
}

/// A non-streamed send: the answer once the task settles.
async fn ask(client: &Client, args: &Args) -> Result<ExitCode, a2a_tower::A2aError> {
    let send = SendMessageRequest {
        message: message(args),
        ..Default::default()
    };
    let res = client
        .clone()
        .oneshot(A2aRequest::new(Operation::SendMessage(send)))
        .await?;
    let mut task = match res {
        A2aResponse::SendMessage(SendMessageResponse::Message(m)) => {
            println!("{}", parts_text(&m.parts));
            return Ok(ExitCode::SUCCESS);
        }
        A2aResponse::SendMessage(SendMessageResponse::Task(t)) => t.into_inner(),
        other => return Err(unexpected(&other)),
    };
    // A server may answer before the task settles: follow it.
    while !settled(task.status.state) {
        tokio::time::sleep(POLL).await;
        let get = GetTaskRequest {
            id: task.id.clone(),
            ..Default::default()
        };
        task = match client
            .clone()
            .oneshot(A2aRequest::new(Operation::GetTask(get)))
            .await?
        {
            A2aResponse::Task(t) => t,
            other => return Err(unexpected(&other)),
        };
    }
    if task.status.state != TaskState::InputRequired {
        let text = task_text(&task);
        if task.status.state == TaskState::Completed || !text.is_empty() {
            println!("{text}");
        }
    }
    Ok(finish(&task.id, &task.context_id, &task.status))
}

/// A streamed send: artifact chunks as they arrive.
async fn ask_streaming(client: &Client, args: &Args) -> Result<ExitCode, a2a_tower::A2aError> {
    let send = SendMessageRequest {
        message: message(args),
        ..Default::default()
    };
    let res = client
        .clone()
        .oneshot(A2aRequest::new(Operation::SendStreamingMessage(send)))
        .await?;
    let A2aResponse::Stream(mut events) = res else {
        return Err(unexpected(&res));
    };
    let mut out = std::io::stdout();
    let mut printed = false;
    let mut last_artifact: Option<String> = None;
    let mut ids = (String::new(), String::new());
    let mut status: Option<TaskStatus> = None;
    while let Some(event) = events.next().await {
        match event? {
            StreamResponse::Message(m) => {
                let _ = writeln!(out, "{}", parts_text(&m.parts));
                return Ok(ExitCode::SUCCESS);
            }
            StreamResponse::Task(t) => {
                ids = (t.id.clone(), t.context_id.clone());
                if !printed && !t.artifacts.is_empty() {
                    let text = task_text(&t);
                    let _ = write!(out, "{text}");
                    printed = !text.is_empty();
                    last_artifact = t.artifacts.last().map(|a| a.artifact_id.clone());
                }
                status = Some(t.status);
            }
            StreamResponse::ArtifactUpdate(u) => {
                ids = (u.task_id, u.context_id);
                let text = parts_text(&u.artifact.parts);
                if text.is_empty() {
                    continue;
                }
                let same = last_artifact.as_deref() == Some(u.artifact.artifact_id.as_str());
                if printed && !(same && u.append) {
                    let _ = writeln!(out);
                }
                let _ = write!(out, "{text}");
                let _ = out.flush();
                printed = true;
                last_artifact = Some(u.artifact.artifact_id);
            }
            StreamResponse::StatusUpdate(u) => {
                ids = (u.task_id, u.context_id);
                status = Some(u.status);
            }
        }
        if status.as_ref().is_some_and(|s| settled(s.state)) {
            break;
        }
    }
    let Some(status) = status.filter(|s| settled(s.state)) else {
        return Err(a2a_tower::A2aError::new(a2a_tower::ErrorKind::Internal)
            .with_message("the stream ended before the task settled"));
    };
    if status.state != TaskState::InputRequired {
        if printed {
            let _ = writeln!(out);
        } else {
            let text = status_text(&status);
            if status.state == TaskState::Completed || !text.is_empty() {
                let _ = writeln!(out, "{text}");
            }
        }
    } else if printed {
        let _ = writeln!(out);
    }
    let _ = out.flush();
    Ok(finish(&ids.0, &ids.1, &status))
}

/// An answer of the wrong kind for the operation.
fn unexpected(res: &A2aResponse) -> a2a_tower::A2aError {
    a2a_tower::A2aError::new(a2a_tower::ErrorKind::Internal)
        .with_message(format!("unexpected answer: {res:?}"))
}

async fn run(args: Args) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let mut builder = A2aClient::builder(card_url(&args.card_url));
    if let Some(t) = args.transport {
        builder = builder.transport(t);
    }
    if let Some(token) = &args.bearer {
        builder = builder.authorization(format!("Bearer {token}").parse()?);
    }
    if let Some(key) = &args.api_key {
        let mut creds = a2a_tower::client::Credentials::new().api_key(key);
        if let Some(token) = &args.bearer {
            creds = creds.bearer(token);
        }
        builder = builder.credentials(creds);
    }
    if let (Some(id), Some(secret)) = (&args.client_id, &args.client_secret) {
        builder = builder.oauth2_client(a2a_tower::client::ClientSecret::new(id, secret));
    }
    if let Some(file) = &args.card_key {
        let text = std::fs::read_to_string(file)?;
        let keys = a2a_tower::signing::VerifyingKey::parse_all(&text, None)
            .map_err(|e| format!("--card-key {file}: {e}"))?;
        builder = builder.card_trust(a2a_tower::client::CardTrust::require(keys));
    }
    let client = builder.build()?.connect().await?;
    let answer = if args.stream {
        ask_streaming(&client, &args).await
    } else {
        ask(&client, &args).await
    };
    answer.map_err(|e| match e.kind() {
        ErrorKind::Unauthenticated | ErrorKind::PermissionDenied => {
            let challenge = e
                .metadata()
                .get("wwwAuthenticate")
                .map(|c| format!("; WWW-Authenticate: {c}"))
                .unwrap_or_default();
            format!("{e}{challenge}{}", declared_schemes(client.card())).into()
        }
        _ => e.into(),
    })
}

/// What the card says a caller needs: its security schemes, by name and
/// kind (empty when it declares none).
fn declared_schemes(card: &a2a_tower::types::AgentCard) -> String {
    use a2a_tower::types::SecurityScheme;
    let schemes: Vec<String> = card
        .security_schemes
        .iter()
        .map(|(name, s)| {
            let kind = match s {
                SecurityScheme::HttpAuth(h) => format!("HTTP {}", h.scheme),
                SecurityScheme::ApiKey(_) => "API key".into(),
                SecurityScheme::OAuth2(_) => "OAuth2".into(),
                SecurityScheme::OpenIdConnect(_) => "OpenID Connect".into(),
                SecurityScheme::Mtls(_) => "mutual TLS".into(),
            };
            format!("{name} ({kind})")
        })
        .collect();
    if schemes.is_empty() {
        String::new()
    } else {
        format!("; the card's security schemes: {}", schemes.join(", "))
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let _telemetry = telemetry::init();
    let args = match parse(std::env::args().skip(1)) {
        Ok(Command::Ask(args)) => *args,
        Ok(Command::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("ask: {e}\n{USAGE}");
            return ExitCode::FAILURE;
        }
    };
    // The root span: every request the client sends carries its traceparent
    // (with `--features otel`).
    match tracing::Instrument::instrument(run(args), tracing::info_span!("ask")).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("ask: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use a2a_tower::types::Artifact;
    use serde_json::json;

    fn args(words: &[&str]) -> Result<Command, String> {
        parse(words.iter().map(|s| (*s).to_owned()))
    }

    fn ask_args(words: &[&str]) -> Args {
        match args(words) {
            Ok(Command::Ask(a)) => *a,
            other => panic!("{words:?}: {other:?}"),
        }
    }

    #[test]
    fn url_and_words_make_the_text() {
        let a = ask_args(&["http://h", "hello", "there"]);
        assert_eq!(a.card_url, "http://h");
        assert_eq!(a.text, "hello there");
        assert_eq!(a.transport, None);
        assert!(!a.stream);
    }

    #[test]
    fn options_anywhere() {
        let a = ask_args(&[
            "--stream",
            "http://h",
            "--transport",
            "http+json",
            "--task",
            "t-1",
            "--context=c-1",
            "hi",
            "--message-id",
            "m-1",
        ]);
        assert!(a.stream);
        assert_eq!(a.transport, Some(Transport::HttpJson));
        assert_eq!(a.task_id.as_deref(), Some("t-1"));
        assert_eq!(a.context_id.as_deref(), Some("c-1"));
        assert_eq!(a.message_id.as_deref(), Some("m-1"));
        assert_eq!(a.text, "hi");
        let a = ask_args(&["http://h", "--api-key", "k1", "x"]);
        assert_eq!(a.api_key.as_deref(), Some("k1"));
        let a = ask_args(&["http://h", "--client-id", "i", "--client-secret=s", "x"]);
        assert_eq!(
            (a.client_id.as_deref(), a.client_secret.as_deref()),
            (Some("i"), Some("s"))
        );
        assert!(args(&["http://h", "--client-id", "i", "x"]).is_err());
        let a = ask_args(&["--transport=jsonrpc", "http://h", "x"]);
        assert_eq!(a.transport, Some(Transport::JsonRpc));
        #[cfg(feature = "grpc")]
        assert_eq!(
            ask_args(&["--transport=grpc", "http://h", "x"]).transport,
            Some(Transport::Grpc)
        );
    }

    #[test]
    fn double_dash_ends_options() {
        let a = ask_args(&["http://h", "--", "--stream", "is", "text"]);
        assert!(!a.stream);
        assert_eq!(a.text, "--stream is text");
    }

    #[test]
    fn bad_command_lines() {
        assert_eq!(args(&["--help"]), Ok(Command::Help));
        assert_eq!(args(&["http://h", "-h"]), Ok(Command::Help));
        for bad in [
            &[][..],
            &["http://h"],
            &["http://h", "--transport", "pigeon", "x"],
            &["http://h", "x", "--transport"],
            &["http://h", "--task", "", "x"],
            &["http://h", "--bogus", "x"],
            &["http://h", "--stream=yes", "x"],
        ] {
            assert!(args(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn bare_origins_mean_the_well_known_card() {
        let card = "http://h:1/.well-known/agent-card.json";
        assert_eq!(card_url("http://h:1"), card);
        assert_eq!(card_url("http://h:1/"), card);
        assert_eq!(card_url(card), card);
        assert_eq!(
            card_url("https://h/agents/x.json"),
            "https://h/agents/x.json"
        );
    }

    #[test]
    fn parts_project_to_text() {
        let mut raw = Part::raw(&b"abc"[..]);
        raw.filename = "f.txt".into();
        let parts = [
            Part::text("chunk-1 "),
            Part::text("chunk-2"),
            // The exact number text, as received.
            Part::data(serde_json::from_str(r#"{"amount":12.50}"#).unwrap()),
            Part::url("https://e/x"),
            raw,
        ];
        assert_eq!(
            parts_text(&parts),
            "chunk-1 chunk-2\n{\"amount\":12.50}\nhttps://e/x\n[3 bytes, f.txt]"
        );
        assert_eq!(parts_text(&[]), "");
    }

    fn task(state: TaskState, message: Option<Message>, artifacts: Vec<Artifact>) -> Task {
        let mut status = TaskStatus::new(state);
        status.message = message;
        Task {
            id: "t".into(),
            context_id: "c".into(),
            status,
            artifacts,
            ..Default::default()
        }
    }

    fn artifact(id: &str, parts: Vec<Part>) -> Artifact {
        Artifact {
            artifact_id: id.into(),
            parts,
            ..Default::default()
        }
    }

    #[test]
    fn artifacts_win_over_the_status_message() {
        let t = task(
            TaskState::Completed,
            Some(Message::agent("m", "done")),
            vec![
                artifact("a", vec![Part::text("hello "), Part::text("there")]),
                artifact("b", vec![Part::data(json!([1]))]),
            ],
        );
        assert_eq!(task_text(&t), "hello there\n[1]");
        let t = task(
            TaskState::Completed,
            Some(Message::agent("m", "done")),
            vec![],
        );
        assert_eq!(task_text(&t), "done");
        assert_eq!(task_text(&task(TaskState::Failed, None, vec![])), "");
    }

    #[test]
    fn a_question_prints_its_text_and_the_ids() {
        let mut m = Message::agent("m", "");
        m.parts = vec![
            Part::data(json!({"text": "Refund 12.5?"})),
            Part::text("ok?"),
        ];
        let t = task(TaskState::InputRequired, Some(m), vec![]);
        assert_eq!(
            question_lines(&t.id, &t.context_id, &t.status),
            "{\"text\":\"Refund 12.5?\"}\nok?\ntask: t\ncontext: c\n"
        );
        let t = task(TaskState::InputRequired, None, vec![]);
        assert_eq!(
            question_lines(&t.id, &t.context_id, &t.status),
            "task: t\ncontext: c\n"
        );
    }

    #[test]
    fn continuing_sets_the_task_and_context() {
        let a = ask_args(&["http://h", "--task", "t", "--context", "c", "yes"]);
        let m = message(&a);
        assert_eq!((m.task_id.as_str(), m.context_id.as_str()), ("t", "c"));
        assert_eq!(m.text(), "yes");
        assert!(!m.message_id.is_empty());
        let m = message(&ask_args(&["http://h", "yes"]));
        assert!(m.task_id.is_empty() && m.context_id.is_empty());
    }
}
