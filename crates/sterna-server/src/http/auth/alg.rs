//! The signing algorithms a resource server may accept: asymmetric ones only, so `none`
//! and HMAC (and with them the "public key as HMAC secret" confusion) cannot even be
//! configured.

use jsonwebtoken::Algorithm;

/// An asymmetric JWS algorithm (RFC 7518) accepted for access tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SigningAlg {
    /// RSASSA-PKCS1-v1_5 with SHA-256 (`RS256`).
    Rs256,
    /// RSASSA-PKCS1-v1_5 with SHA-384 (`RS384`).
    Rs384,
    /// RSASSA-PKCS1-v1_5 with SHA-512 (`RS512`).
    Rs512,
    /// RSASSA-PSS with SHA-256 (`PS256`).
    Ps256,
    /// RSASSA-PSS with SHA-384 (`PS384`).
    Ps384,
    /// RSASSA-PSS with SHA-512 (`PS512`).
    Ps512,
    /// ECDSA on P-256 with SHA-256 (`ES256`).
    Es256,
    /// ECDSA on P-384 with SHA-384 (`ES384`).
    Es384,
    /// Ed25519 (`EdDSA`).
    EdDsa,
}

impl SigningAlg {
    /// Every algorithm: the default allow-list.
    pub const ALL: [SigningAlg; 9] = [
        Self::Rs256,
        Self::Rs384,
        Self::Rs512,
        Self::Ps256,
        Self::Ps384,
        Self::Ps512,
        Self::Es256,
        Self::Es384,
        Self::EdDsa,
    ];

    /// The JOSE name (`RS256` …).
    pub fn name(self) -> &'static str {
        match self {
            Self::Rs256 => "RS256",
            Self::Rs384 => "RS384",
            Self::Rs512 => "RS512",
            Self::Ps256 => "PS256",
            Self::Ps384 => "PS384",
            Self::Ps512 => "PS512",
            Self::Es256 => "ES256",
            Self::Es384 => "ES384",
            Self::EdDsa => "EdDSA",
        }
    }

    /// The algorithm of a JOSE name; `None` for `none`, HMAC and anything unknown.
    pub(crate) fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.name() == name)
    }

    pub(crate) fn jwt(self) -> Algorithm {
        match self {
            Self::Rs256 => Algorithm::RS256,
            Self::Rs384 => Algorithm::RS384,
            Self::Rs512 => Algorithm::RS512,
            Self::Ps256 => Algorithm::PS256,
            Self::Ps384 => Algorithm::PS384,
            Self::Ps512 => Algorithm::PS512,
            Self::Es256 => Algorithm::ES256,
            Self::Es384 => Algorithm::ES384,
            Self::EdDsa => Algorithm::EdDSA,
        }
    }

    /// The kind of key the algorithm verifies with.
    pub(crate) fn family(self) -> KeyFamily {
        match self {
            Self::Rs256 | Self::Rs384 | Self::Rs512 | Self::Ps256 | Self::Ps384 | Self::Ps512 => {
                KeyFamily::Rsa
            }
            Self::Es256 => KeyFamily::P256,
            Self::Es384 => KeyFamily::P384,
            Self::EdDsa => KeyFamily::Ed25519,
        }
    }
}

/// A public key's type and curve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyFamily {
    Rsa,
    P256,
    P384,
    Ed25519,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn none_and_hmac_have_no_algorithm() {
        for name in ["none", "HS256", "HS384", "HS512", "rs256", ""] {
            assert_eq!(SigningAlg::from_name(name), None, "{name}");
        }
        for a in SigningAlg::ALL {
            assert_eq!(SigningAlg::from_name(a.name()), Some(a));
        }
    }
}
