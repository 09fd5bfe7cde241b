//! `braid.Principal`: who is asking, built from verified tokens only.

use pyo3::prelude::*;

use crate::errors::OrRaise;

/// Who is asking: a set of ACL tokens such as ``tenant:acme``, ``group:support``,
/// ``user:42``. Every principal also holds ``public``.
///
/// Build it from tokens your own authentication verified (a session, a signed token), never
/// from text a user or a model typed: a search sees exactly the records its principal may
/// see. Tokens in Braid's reserved namespace (``__braid:…``) raise
/// :class:`braid.ReservedTokenError`.
///
/// >>> braid.Principal(["tenant:acme", "group:support"])
/// Principal(['group:support', 'public', 'tenant:acme'])
#[pyclass(name = "Principal", module = "braid", frozen, eq)]
#[derive(Clone, PartialEq)]
pub(crate) struct PyPrincipal {
    pub(crate) inner: braid::Principal,
}

#[pymethods]
impl PyPrincipal {
    #[new]
    fn new(tokens: Vec<String>) -> PyResult<Self> {
        Ok(PyPrincipal { inner: braid::Principal::try_from_verified_tokens(tokens).or_raise()? })
    }

    /// An anonymous caller: sees public records only.
    #[staticmethod]
    fn public() -> Self {
        PyPrincipal { inner: braid::Principal::public() }
    }

    /// The principal's tokens, sorted (``public`` included).
    #[getter]
    fn tokens(&self) -> Vec<String> {
        self.inner.tokens().map(str::to_owned).collect()
    }

    /// The principal's tenant tokens (``tenant:…``), sorted.
    #[getter]
    fn tenants(&self) -> Vec<String> {
        self.inner.tenants().map(str::to_owned).collect()
    }

    /// Whether the principal holds ``token``.
    fn has(&self, token: &str) -> bool {
        self.inner.has(token)
    }

    fn __repr__(&self) -> String {
        let tokens: Vec<String> = self.inner.tokens().map(|t| format!("{t:?}").replace('"', "'")).collect();
        format!("Principal([{}])", tokens.join(", "))
    }
}
