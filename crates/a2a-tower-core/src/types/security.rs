//! Security schemes (a oneof of five kinds), OAuth flows and security requirements.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::serde_util::{is_false, null_default};

/// How to authenticate with the agent; exactly one kind.
///
/// ```
/// use a2a_tower::types::{HttpAuthSecurityScheme, SecurityScheme};
/// let s = SecurityScheme::HttpAuth(HttpAuthSecurityScheme { scheme: "Bearer".into(), ..Default::default() });
/// assert_eq!(serde_json::to_string(&s).unwrap(), r#"{"httpAuthSecurityScheme":{"scheme":"Bearer"}}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum SecurityScheme {
    /// API key in a header, query parameter or cookie.
    #[serde(rename = "apiKeySecurityScheme", alias = "api_key_security_scheme")]
    ApiKey(ApiKeySecurityScheme),
    /// HTTP authentication (Bearer, Basic, …).
    #[serde(rename = "httpAuthSecurityScheme", alias = "http_auth_security_scheme")]
    HttpAuth(HttpAuthSecurityScheme),
    /// OAuth 2.0.
    #[serde(rename = "oauth2SecurityScheme", alias = "oauth2_security_scheme")]
    OAuth2(OAuth2SecurityScheme),
    /// OpenID Connect.
    #[serde(
        rename = "openIdConnectSecurityScheme",
        alias = "open_id_connect_security_scheme"
    )]
    OpenIdConnect(OpenIdConnectSecurityScheme),
    /// Mutual TLS.
    #[serde(rename = "mtlsSecurityScheme", alias = "mtls_security_scheme")]
    Mtls(MutualTlsSecurityScheme),
}

/// API key authentication.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ApiKeySecurityScheme {
    /// Description.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub description: String,
    /// `query`, `header` or `cookie`.
    #[serde(default, deserialize_with = "null_default")]
    pub location: String,
    /// Name of the header, query parameter or cookie.
    #[serde(default, deserialize_with = "null_default")]
    pub name: String,
}

/// HTTP authentication.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpAuthSecurityScheme {
    /// Description.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub description: String,
    /// Scheme name, e.g. `Bearer`.
    #[serde(default, deserialize_with = "null_default")]
    pub scheme: String,
    /// Bearer token format hint, e.g. `JWT`.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "bearer_format",
        skip_serializing_if = "String::is_empty"
    )]
    pub bearer_format: String,
}

/// OAuth 2.0 authentication.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuth2SecurityScheme {
    /// Description.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub description: String,
    /// The supported flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flows: Option<OAuthFlows>,
    /// RFC 8414 metadata URL.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "oauth2_metadata_url",
        skip_serializing_if = "String::is_empty"
    )]
    pub oauth2_metadata_url: String,
}

/// OpenID Connect authentication.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenIdConnectSecurityScheme {
    /// Description.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub description: String,
    /// Discovery URL.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "open_id_connect_url"
    )]
    pub open_id_connect_url: String,
}

/// Mutual TLS authentication.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MutualTlsSecurityScheme {
    /// Description.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub description: String,
}

/// The OAuth 2.0 flow; exactly one kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum OAuthFlows {
    /// Authorization code (with optional PKCE).
    #[serde(alias = "authorization_code")]
    AuthorizationCode(AuthorizationCodeOAuthFlow),
    /// Client credentials.
    #[serde(alias = "client_credentials")]
    ClientCredentials(ClientCredentialsOAuthFlow),
    /// Implicit (deprecated).
    Implicit(ImplicitOAuthFlow),
    /// Password (deprecated).
    Password(PasswordOAuthFlow),
    /// Device code (RFC 8628).
    #[serde(alias = "device_code")]
    DeviceCode(DeviceCodeOAuthFlow),
}

/// Scope name to description.
pub type Scopes = BTreeMap<String, String>;

/// Authorization code flow.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthorizationCodeOAuthFlow {
    /// Authorization URL.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "authorization_url"
    )]
    pub authorization_url: String,
    /// Token URL.
    #[serde(default, deserialize_with = "null_default", alias = "token_url")]
    pub token_url: String,
    /// Refresh URL.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "refresh_url",
        skip_serializing_if = "String::is_empty"
    )]
    pub refresh_url: String,
    /// Available scopes.
    #[serde(default, deserialize_with = "null_default")]
    pub scopes: Scopes,
    /// PKCE is required.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "pkce_required",
        skip_serializing_if = "is_false"
    )]
    pub pkce_required: bool,
}

/// Client credentials flow.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCredentialsOAuthFlow {
    /// Token URL.
    #[serde(default, deserialize_with = "null_default", alias = "token_url")]
    pub token_url: String,
    /// Refresh URL.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "refresh_url",
        skip_serializing_if = "String::is_empty"
    )]
    pub refresh_url: String,
    /// Available scopes.
    #[serde(default, deserialize_with = "null_default")]
    pub scopes: Scopes,
}

/// Implicit flow (deprecated).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImplicitOAuthFlow {
    /// Authorization URL.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "authorization_url",
        skip_serializing_if = "String::is_empty"
    )]
    pub authorization_url: String,
    /// Refresh URL.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "refresh_url",
        skip_serializing_if = "String::is_empty"
    )]
    pub refresh_url: String,
    /// Available scopes.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub scopes: Scopes,
}

/// Password flow (deprecated).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PasswordOAuthFlow {
    /// Token URL.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "token_url",
        skip_serializing_if = "String::is_empty"
    )]
    pub token_url: String,
    /// Refresh URL.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "refresh_url",
        skip_serializing_if = "String::is_empty"
    )]
    pub refresh_url: String,
    /// Available scopes.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub scopes: Scopes,
}

/// Device code flow.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceCodeOAuthFlow {
    /// Device authorization URL.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "device_authorization_url"
    )]
    pub device_authorization_url: String,
    /// Token URL.
    #[serde(default, deserialize_with = "null_default", alias = "token_url")]
    pub token_url: String,
    /// Refresh URL.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "refresh_url",
        skip_serializing_if = "String::is_empty"
    )]
    pub refresh_url: String,
    /// Available scopes.
    #[serde(default, deserialize_with = "null_default")]
    pub scopes: Scopes,
}

/// One way to satisfy the card's security: every named scheme (with its scopes) at once.
///
/// Written as `{"schemes":{"name":{"list":["scope"]}}}`; the bare-array form
/// `{"schemes":{"name":["scope"]}}` that some SDKs write is accepted too.
///
/// ```
/// use a2a_tower::types::SecurityRequirement;
/// let r: SecurityRequirement = serde_json::from_str(r#"{"schemes":{"google":["openid"]}}"#).unwrap();
/// assert_eq!(serde_json::to_string(&r).unwrap(), r#"{"schemes":{"google":{"list":["openid"]}}}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SecurityRequirement {
    /// Scheme name to required scopes.
    #[serde(default, deserialize_with = "null_default")]
    pub schemes: BTreeMap<String, ScopeList>,
}

/// The scopes one scheme needs (proto `StringList`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ScopeList(pub Vec<String>);

impl Serialize for ScopeList {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Wire<'a> {
            list: &'a [String],
        }
        Wire { list: &self.0 }.serialize(s)
    }
}

impl<'de> Deserialize<'de> for ScopeList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = ScopeList;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(r#"{"list":[…]} or an array of scopes"#)
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<ScopeList, E> {
                Ok(ScopeList::default())
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<ScopeList, A::Error> {
                let mut v = Vec::new();
                while let Some(s) = a.next_element::<String>()? {
                    v.push(s);
                }
                Ok(ScopeList(v))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<ScopeList, A::Error> {
                let mut list = Vec::new();
                while let Some(k) = a.next_key::<String>()? {
                    if k == "list" {
                        list = a.next_value::<Option<Vec<String>>>()?.unwrap_or_default();
                    } else {
                        a.next_value::<serde::de::IgnoredAny>()?;
                    }
                }
                Ok(ScopeList(list))
            }
        }
        d.deserialize_any(V)
    }
}
