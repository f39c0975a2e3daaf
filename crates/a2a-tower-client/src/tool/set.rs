//! [`ToolSet`]: remote A2A agents as tools, owning the clients behind them.
//!
//! [`ToolSet::open`] checks every [`Endpoint`]'s configuration, resolves its
//! card and connects a client, in order. If one endpoint fails, the clients
//! already opened are closed (dropped) in reverse order and nothing is
//! returned, so a failed open never hands partial ownership to the caller.
//! [`ToolSet::tools`] is a snapshot of the tools; [`ToolSet::close`] (also on
//! drop) closes the clients in reverse order, after which every tool answers
//! [`Closed`](ToolErrorKind::Closed). Calls already under way finish.
//!
//! Tool names are the endpoints' overrides or derived from the cards' names
//! ([`tool_name`]); an empty name, a card name that derives none, and a
//! name used twice in one set are [`Configuration`](ToolErrorKind::Configuration)
//! errors.
//!
//! ```
//! use a2a_tower::tool::{Endpoint, ToolErrorKind, ToolSet};
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let set = ToolSet::open(Vec::<Endpoint>::new()).await.unwrap();
//! assert!(set.tools().is_empty());
//! set.close();
//! set.close(); // idempotent
//!
//! // Checked before any card is fetched.
//! let bad = ToolSet::open([Endpoint::new("not a url")]).await;
//! assert_eq!(bad.err().map(|e| e.kind()), Some(ToolErrorKind::Configuration));
//! # });
//! ```

use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, Mutex};

use super::agent::{AgentTool, Close, describe, exchange_error};
use super::continuation::{Binding, Bound, Identity};
use super::contract::{Tool, ToolError, ToolErrorKind};
use super::endpoint::Endpoint;
use super::name::tool_name;
use crate::ConfigError;
use crate::client::HttpService;

/// Remote agents as tools; see the module docs.
pub struct ToolSet {
    tools: Vec<Arc<dyn Tool>>,
    /// The clients still open, in the order they were opened.
    open: Mutex<Vec<Arc<dyn Close>>>,
}

impl fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.tools.iter().map(|t| t.name()).collect();
        f.debug_struct("ToolSet")
            .field("tools", &names)
            .field("closed", &self.is_closed())
            .finish()
    }
}

fn configuration(card_url: &str, message: impl fmt::Display) -> ToolError {
    ToolError::new(
        ToolErrorKind::Configuration,
        ConfigError::new(format!("endpoint {card_url}: {message}")),
    )
}

/// Closes `opened` in reverse order.
fn close_all(opened: Vec<Arc<dyn Close>>) {
    for c in opened.into_iter().rev() {
        c.close();
    }
}

impl ToolSet {
    /// Opens a tool per endpoint, in order; see the module docs. The first
    /// failure is returned: Configuration for an endpoint's settings or
    /// name, Transport or Protocol for its card (the [`A2aError`](crate::A2aError)
    /// as the source).
    pub async fn open<S, I>(endpoints: I) -> Result<Self, ToolError>
    where
        I: IntoIterator<Item = Endpoint<S>>,
        S: HttpService,
    {
        let nonce = uuid::Uuid::new_v4().to_string();
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        let mut opened: Vec<Arc<dyn Close>> = Vec::new();
        let mut names = HashSet::new();
        let mut endpoints = endpoints.into_iter();
        for endpoint in endpoints.by_ref() {
            match open_one(endpoint, &nonce, &names).await {
                Ok(tool) => {
                    names.insert(tool.bound.binding.tool.clone());
                    tools.push(tool.clone());
                    opened.push(tool);
                }
                Err(e) => {
                    // The failed endpoint's client is gone already; then the
                    // opened ones, newest first; then the endpoints not tried.
                    drop(tools);
                    close_all(opened);
                    drop(endpoints);
                    return Err(e);
                }
            }
        }
        Ok(Self {
            tools,
            open: Mutex::new(opened),
        })
    }

    /// The tools, in endpoint order (a snapshot: the set does not change).
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tools.clone()
    }

    /// Closes every client, newest first. Idempotent; afterwards every tool
    /// of the set answers [`Closed`](ToolErrorKind::Closed).
    pub fn close(&self) {
        let opened = std::mem::take(&mut *self.open.lock().unwrap_or_else(|p| p.into_inner()));
        close_all(opened);
    }

    /// Whether [`close`](Self::close) was called (or the set was empty).
    pub fn is_closed(&self) -> bool {
        self.open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_empty()
    }
}

impl Drop for ToolSet {
    fn drop(&mut self) {
        self.close();
    }
}

async fn open_one<S>(
    endpoint: Endpoint<S>,
    nonce: &str,
    taken: &HashSet<String>,
) -> Result<Arc<AgentTool<S>>, ToolError>
where
    S: HttpService,
{
    let Endpoint {
        client,
        card_url,
        name,
        identity,
        concurrency,
        effect,
    } = endpoint;
    let url = card_url.as_str();
    if name.as_deref().is_some_and(|n| n.trim().is_empty()) {
        return Err(configuration(url, "the tool name must not be empty"));
    }
    let identity = match identity {
        Some(id) if id.is_empty() => {
            return Err(configuration(
                url,
                "the continuation identity must not be empty",
            ));
        }
        Some(id) => Identity::Host(id),
        None => Identity::Instance(nonce.to_owned()),
    };
    let connector = client
        .build()
        .map_err(|e| configuration(url, e.message()))?;
    let client = connector.connect().await.map_err(exchange_error)?;
    drop(connector);
    let card = client.card();
    let tool = match name {
        Some(n) => n,
        None => tool_name(&card.name).ok_or_else(|| {
            configuration(
                url,
                "the card's name derives no tool name; give the endpoint one",
            )
        })?,
    };
    if taken.contains(&tool) {
        return Err(configuration(
            url,
            format!("the tool name {tool:?} is already used in this set"),
        ));
    }
    let interfaces =
        serde_json::to_value(&card.supported_interfaces).expect("interfaces are plain JSON");
    Ok(Arc::new(AgentTool {
        description: describe(card),
        bound: Bound {
            binding: Binding {
                card_url,
                interfaces,
                tool,
            },
            identity,
        },
        concurrency,
        effect,
        client: Mutex::new(Some(client)),
    }))
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::future::Ready;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::{Context, Poll};

    use bytes::Bytes;
    use http::Request;
    use http_body_util::Full;
    use serde_json::json;
    use tower_service::Service;

    use super::*;
    use crate::tool::{Answer, Concurrency, Invocation, Outcome};
    use crate::types::{AgentCard, AgentInterface};

    /// Drops, in the order they happened, shared by every service of a test.
    type Log = Arc<Mutex<Vec<String>>>;

    /// The HTTP side of one agent, in process: answers its card's URL with
    /// the card (or 404 without one) and every other request with 503.
    /// Counts requests; when its last clone goes, records its name: the
    /// client using it is closed.
    #[derive(Clone)]
    struct Agent(Arc<Inner>);

    struct Inner {
        name: String,
        card: Option<AgentCard>,
        requests: AtomicUsize,
        drops: Log,
    }

    impl Drop for Inner {
        fn drop(&mut self) {
            self.drops.lock().unwrap().push(self.name.clone());
        }
    }

    impl Service<Request<Full<Bytes>>> for Agent {
        type Response = http::Response<Full<Bytes>>;
        type Error = Infallible;
        type Future = Ready<Result<Self::Response, Infallible>>;

        fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, req: Request<Full<Bytes>>) -> Self::Future {
            self.0.requests.fetch_add(1, Ordering::SeqCst);
            let (status, body) = match &self.0.card {
                Some(card) if req.uri().path() == "/card" => {
                    (200, serde_json::to_vec(card).unwrap())
                }
                Some(_) => (503, Vec::new()),
                None => (404, Vec::new()),
            };
            let res = http::Response::builder()
                .status(status)
                .header("content-type", "application/json")
                .body(Full::new(Bytes::from(body)))
                .unwrap();
            std::future::ready(Ok(res))
        }
    }

    fn agent(name: &str, card_name: Option<&str>, drops: &Log) -> (Endpoint<Agent>, Agent) {
        let base = format!("http://{name}.test");
        let card = card_name.map(|n| {
            AgentCard::new(n, format!("The {n} agent."), "1")
                .with_interface(AgentInterface::jsonrpc(format!("{base}/rpc")))
        });
        let svc = Agent(Arc::new(Inner {
            name: name.into(),
            card,
            requests: AtomicUsize::new(0),
            drops: drops.clone(),
        }));
        (Endpoint::new(format!("{base}/card")).http(svc.clone()), svc)
    }

    fn drops(log: &Log) -> Vec<String> {
        log.lock().unwrap().clone()
    }

    fn kind<T: fmt::Debug>(r: Result<T, ToolError>) -> ToolErrorKind {
        r.unwrap_err().kind()
    }

    #[tokio::test]
    async fn a_failed_open_closes_the_opened_clients_in_reverse_order() {
        let log = Log::default();
        let (a, _) = agent("a", Some("A"), &log);
        let (b, _) = agent("b", Some("B"), &log);
        let (c, _) = agent("c", None, &log);
        let (d, d_svc) = agent("d", Some("D"), &log);
        drop(d_svc);
        let r = ToolSet::open([a, b, c, d]).await;
        let e = r.expect_err("the card of c is missing");
        assert_eq!(e.kind(), ToolErrorKind::Transport, "{e}");
        // c (failed) first, then b and a newest first, then d (never tried).
        assert_eq!(drops(&log), ["c", "b", "a", "d"]);
    }

    #[tokio::test]
    async fn duplicate_and_underivable_names_are_configuration_errors() {
        let log = Log::default();
        let (a, _) = agent("a", Some("Same Name"), &log);
        let (b, _) = agent("b", Some("same-name"), &log);
        let e = ToolSet::open([a, b]).await.err().unwrap();
        assert_eq!(e.kind(), ToolErrorKind::Configuration);
        assert!(
            e.to_string().contains("\"same_name\" is already used"),
            "{e}"
        );
        assert_eq!(drops(&log), ["b", "a"]);

        let log = Log::default();
        let (a, _) = agent("a", Some("???"), &log);
        assert_eq!(kind(ToolSet::open([a]).await), ToolErrorKind::Configuration);
        let (a, _) = agent("a", Some("A"), &log);
        assert_eq!(
            kind(ToolSet::open([a.name(" ")]).await),
            ToolErrorKind::Configuration
        );
        let (a, svc) = agent("a", Some("A"), &log);
        let r = ToolSet::open([a.continuation_identity("")]).await;
        assert_eq!(kind(r), ToolErrorKind::Configuration);
        assert_eq!(
            svc.0.requests.load(Ordering::SeqCst),
            0,
            "checked before any fetch"
        );
        // An override avoids the clash.
        let (a, _) = agent("a", Some("Same"), &log);
        let (b, _) = agent("b", Some("Same"), &log);
        let set = ToolSet::open([a, b.name("other")]).await.unwrap();
        let names: Vec<String> = set.tools().iter().map(|t| t.name().to_owned()).collect();
        assert_eq!(names, ["same", "other"]);
    }

    #[tokio::test]
    async fn configuration_errors_come_before_any_fetch() {
        let log = Log::default();
        let (a, svc) = agent("a", Some("A"), &log);
        for bad in [
            a.card_timeout(std::time::Duration::ZERO),
            agent("a", Some("A"), &log).0.max_card_bytes(0),
            agent("a", Some("A"), &log)
                .0
                .allow_origins(["http://x.test/path"]),
        ] {
            assert_eq!(
                kind(ToolSet::open([bad]).await),
                ToolErrorKind::Configuration
            );
        }
        let bad_url = Endpoint::new("/relative/card").http(svc.clone());
        assert_eq!(
            kind(ToolSet::open([bad_url]).await),
            ToolErrorKind::Configuration
        );
        assert_eq!(svc.0.requests.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn close_is_idempotent_and_tools_then_answer_closed() {
        let log = Log::default();
        let (a, a_svc) = agent("a", Some("Alpha"), &log);
        let (b, b_svc) = agent("b", Some("Beta"), &log);
        drop((a_svc, b_svc));
        let set = ToolSet::open([a.concurrency(|_| Concurrency::concurrent("shared")), b])
            .await
            .unwrap();
        let tools = set.tools();
        assert_eq!(tools[0].name(), "alpha");
        assert_eq!(tools[0].description(), "The Alpha agent.");
        let call = Invocation::new("1", json!({"message": "hi"}));
        assert_eq!(
            tools[0].concurrency(&call),
            Concurrency::concurrent("shared")
        );
        assert_eq!(tools[1].concurrency(&call), Concurrency::exclusive("beta"));
        assert!(!set.is_closed());
        set.close();
        assert!(set.is_closed());
        assert_eq!(drops(&log), ["b", "a"]);
        set.close();
        drop(set);
        assert_eq!(drops(&log), ["b", "a"], "closed once");
        for t in &tools {
            assert_eq!(kind(t.call(call.clone()).await), ToolErrorKind::Closed);
        }
    }

    #[tokio::test]
    async fn dropping_the_set_closes_it() {
        let log = Log::default();
        let (a, _) = agent("a", Some("A"), &log);
        let (b, _) = agent("b", Some("B"), &log);
        let set = ToolSet::open([a, b]).await.unwrap();
        let tools = set.tools();
        drop(set);
        assert_eq!(drops(&log), ["b", "a"]);
        assert_eq!(
            kind(
                tools[0]
                    .call(Invocation::new("1", json!({"message": "x"})))
                    .await
            ),
            ToolErrorKind::Closed
        );
    }

    #[tokio::test]
    async fn bad_input_and_foreign_continuations_make_no_request() {
        let log = Log::default();
        let (a, svc) = agent("a", Some("A"), &log);
        let set = ToolSet::open([a]).await.unwrap();
        let tool = &set.tools()[0];
        let fetched = svc.0.requests.load(Ordering::SeqCst);
        let bad = Invocation::new("1", json!({"message": "x", "extra": true}));
        assert_eq!(kind(tool.call(bad).await), ToolErrorKind::InvalidInput);
        // An input request of another tool set instance (no identity).
        let (other, _) = agent("a", Some("A"), &log);
        let other = ToolSet::open([other]).await.unwrap();
        let theirs = crate::tool::InputRequest {
            tool: "a".into(),
            question: "q".into(),
            answer_schema: None,
            continuation: json!({}),
        };
        let r = tool.resume(theirs, Answer::Text("x".into())).await;
        assert_eq!(kind(r), ToolErrorKind::Continuation);
        drop(other);
        assert_eq!(svc.0.requests.load(Ordering::SeqCst), fetched);
        // The exchange itself (503 here) is a transport error.
        let r = tool
            .call(Invocation::new("2", json!({"message": "x"})))
            .await;
        assert!(
            matches!(&r, Err(e) if e.kind() == ToolErrorKind::Transport),
            "{r:?}"
        );
        let _: Option<Outcome> = r.ok();
    }
}
