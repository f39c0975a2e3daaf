//! Run with `cargo run -p a2a-tower-example-actix --example actix`: the echo
//! agent served by actix-web 4 through a small adapter from actix's request
//! to `http::Request` and from `http::Response` back to actix's, streaming
//! SSE event by event. (The example is a package of its own, beside the
//! others: `examples/actix-host/Cargo.toml` says why.)
//!
//! Listens on `A2A_ADDR` (default `127.0.0.1:8080`; `127.0.0.1:0` picks a
//! free port) and prints `listening on http://ADDR` once bound. The card
//! advertises JSON-RPC at `/a2a` and HTTP+JSON under `/a2a/rest`; actix
//! handles Ctrl-C itself (graceful stop).
//!
//! Runtime: actix runs each worker on a single-threaded tokio runtime, so the
//! task engine's `tokio::spawn` (one task per execution and per stream) works
//! inside handlers; a spawned execution stays on the worker that admitted it.

#[path = "../common/agents.rs"]
mod agents;

use a2a_tower::limit::DEFAULT_MAX_BODY_BYTES;
use a2a_tower::server::A2aServer;
use actix_web::{App, HttpServer, web};

/// The request body limit: the A2A body-limit layer's, which the adapter
/// also applies while reading actix's payload.
const MAX_BODY_BYTES: usize = DEFAULT_MAX_BODY_BYTES;

/// actix-web ⇄ tower `http` adapter. actix-web 4 is built on `http` 0.2
/// types, so methods, URIs, headers and statuses are converted by value.
mod adapter {
    use std::convert::Infallible;

    use actix_web::http::header::{HeaderName, HeaderValue};
    use actix_web::http::{StatusCode, Version};
    use actix_web::{HttpMessage, HttpRequest, HttpResponse, web};
    use bytes::{Bytes, BytesMut};
    use futures_util::StreamExt;
    use http_body_util::{BodyExt, Full};
    use tower::{Service, ServiceExt};

    use super::agents::Principal;

    /// Calls `svc` with actix's request and answers with its response.
    ///
    /// The payload is read into memory first, at most `limit + 1` bytes:
    /// actix's `Payload` is `!Send` (it lives on the worker thread), while
    /// a tower body may be polled from any thread. A2A requests are single
    /// JSON documents that the bindings decode only once complete, so
    /// buffering costs nothing over streaming; and passing one byte over the
    /// limit lets the A2A body-limit layer answer with its own error body,
    /// identical to every other host. (The alternative, a channel fed by a
    /// `spawn_local`ed task, streams the body but buys nothing here.)
    pub(crate) async fn call<S>(
        svc: S,
        req: HttpRequest,
        mut payload: web::Payload,
        limit: usize,
    ) -> HttpResponse
    where
        S: Service<
                http::Request<Full<Bytes>>,
                Response = http::Response<a2a_tower::Body>,
                Error = Infallible,
            >,
    {
        let mut body = BytesMut::new();
        while let Some(chunk) = payload.next().await {
            let Ok(chunk) = chunk else {
                // The client broke off mid-body; nobody reads this answer.
                return HttpResponse::BadRequest().finish();
            };
            let room = limit + 1 - body.len();
            if chunk.len() >= room {
                body.extend_from_slice(&chunk[..room]);
                break;
            }
            body.extend_from_slice(&chunk);
        }
        let Some(request) = to_http(&req, body.freeze()) else {
            return HttpResponse::BadRequest().finish();
        };
        let Ok(response) = svc.oneshot(request).await;
        from_http(response).await
    }

    /// actix's request head plus the buffered body as an `http::Request`.
    fn to_http(req: &HttpRequest, body: Bytes) -> Option<http::Request<Full<Bytes>>> {
        let version = match req.version() {
            Version::HTTP_10 => http::Version::HTTP_10,
            Version::HTTP_2 => http::Version::HTTP_2,
            _ => http::Version::HTTP_11,
        };
        let mut builder = http::Request::builder()
            .method(req.method().as_str())
            .uri(req.uri().to_string())
            .version(version);
        for (name, value) in req.headers() {
            builder = builder.header(name.as_str(), value.as_bytes());
        }
        let mut request = builder.body(Full::new(body)).ok()?;
        // A principal an actix auth middleware put in actix's extensions
        // crosses over into the `http` extensions, where the A2A bindings
        // hand it to the engine and the agent.
        if let Some(p) = req.extensions().get::<Principal>() {
            request.extensions_mut().insert(p.clone());
        }
        Some(request)
    }

    /// An `http::Response` as actix's: a body of known length is sent whole
    /// (actix sets `content-length`); any other body, SSE in particular, is
    /// streamed frame by frame as the service produces it.
    async fn from_http(response: http::Response<a2a_tower::Body>) -> HttpResponse {
        let (parts, body) = response.into_parts();
        let status = StatusCode::from_u16(parts.status.as_u16())
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut out = HttpResponse::build(status);
        for (name, value) in &parts.headers {
            // Framing is actix's business.
            if matches!(
                *name,
                http::header::CONTENT_LENGTH
                    | http::header::TRANSFER_ENCODING
                    | http::header::CONNECTION
            ) {
                continue;
            }
            if let (Ok(n), Ok(v)) = (
                HeaderName::from_bytes(name.as_str().as_bytes()),
                HeaderValue::from_bytes(value.as_bytes()),
            ) {
                out.append_header((n, v));
            }
        }
        if http_body::Body::size_hint(&body).exact().is_some() {
            match body.collect().await {
                Ok(all) => out.body(all.to_bytes()),
                Err(_) => HttpResponse::InternalServerError().finish(),
            }
        } else {
            // actix wants `Into<Box<dyn Error>>`; `BoxError` (with `Send +
            // Sync`) does not convert by itself.
            out.streaming(
                body.into_data_stream()
                    .map(|f| f.map_err(std::io::Error::other)),
            )
        }
    }
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    // Bind first: the card advertises the bound address (port 0 included).
    let listener = std::net::TcpListener::bind(agents::addr())?;
    let addr = listener.local_addr()?;
    let card = agents::card(&agents::base_url(addr));
    let a2a = A2aServer::builder(card)
        .max_body_bytes(MAX_BODY_BYTES)
        .agent(agents::Echo)
        .await
        .map_err(std::io::Error::other)?;
    // The service routes the card's paths (the card, `/a2a`, `/a2a/rest/...`,
    // and the same paths below `/a2a` when a host strips that prefix) and
    // answers 404 elsewhere, so it is actix's default service: no actix
    // routes needed. Host routes would go before it.
    let server = HttpServer::new(move || {
        let svc = a2a.clone();
        App::new().default_service(web::to(
            move |req: actix_web::HttpRequest, payload: web::Payload| {
                adapter::call(svc.clone(), req, payload, MAX_BODY_BYTES)
            },
        ))
    })
    .shutdown_timeout(10)
    .listen(listener)?;
    println!("listening on http://{addr}");
    server.run().await?;
    println!("shut down gracefully");
    Ok(())
}
