//! XChaCha20-Poly1305 as draft-irtf-cfrg-xchacha-03 builds it (§2.3): HChaCha20 (the
//! `chacha20` crate) turns the key and the nonce's first 16 bytes into a subkey, and
//! ChaCha20-Poly1305 of RFC 8439 (`ring`) seals with that subkey and the nonce's last 8
//! bytes behind four zero bytes. The bytes are those of any XChaCha20-Poly1305 (the tests
//! check the draft's vector and the `chacha20poly1305` crate's output).
//!
//! Why not that crate: its Poly1305 (AVX2 backend, chosen at run time) cost about 1.3 µs
//! per message whatever the message's length on the benchmark machine, against ~0.1 µs
//! for ring's; a state is sealed or opened at each round of every MRTR request.

use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, Nonce, Tag, UnboundKey};

/// Bytes of a nonce.
pub(crate) const NONCE: usize = 24;
/// Bytes of a tag.
pub(crate) const TAG: usize = 16;

/// A key; each message's subkey is made from it and that message's nonce.
pub(crate) struct XChaCha {
    key: [u8; 32],
}

/// A tag that does not match: forged, altered, or sealed under another key or context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Forged;

impl XChaCha {
    pub(crate) fn new(key: [u8; 32]) -> Self {
        Self { key }
    }

    /// Encrypts `buf` in place; returns the tag over `aad` and the ciphertext.
    pub(crate) fn seal(&self, nonce: &[u8; NONCE], aad: &[u8], buf: &mut [u8]) -> [u8; TAG] {
        let (key, nonce) = self.subkey(nonce);
        let tag = key
            .seal_in_place_separate_tag(nonce, Aad::from(aad), buf)
            .expect("ChaCha20-Poly1305 seals any length below 256 GiB");
        let mut out = [0u8; TAG];
        out.copy_from_slice(tag.as_ref());
        out
    }

    /// Checks `tag` and decrypts `buf` in place (zeroed when the tag is wrong).
    pub(crate) fn open(
        &self,
        nonce: &[u8; NONCE],
        aad: &[u8],
        buf: &mut [u8],
        tag: [u8; TAG],
    ) -> Result<(), Forged> {
        let (key, nonce) = self.subkey(nonce);
        key.open_in_place_separate_tag(nonce, Aad::from(aad), Tag::from(tag), buf, 0..)
            .map(|_| ())
            .map_err(|_| Forged)
    }

    fn subkey(&self, nonce: &[u8; NONCE]) -> (LessSafeKey, Nonce) {
        let (head, tail) = nonce.split_at(16);
        let head: &[u8; 16] = head.try_into().expect("16 bytes");
        let mut sub = chacha20::hchacha::<chacha20::R20>(&self.key.into(), &(*head).into());
        let key = UnboundKey::new(&CHACHA20_POLY1305, &sub).expect("a 32-byte key");
        sub.fill(0);
        let mut n = [0u8; 12];
        n[4..].copy_from_slice(tail);
        (LessSafeKey::new(key), Nonce::assume_unique_for_key(n))
    }
}

impl Drop for XChaCha {
    fn drop(&mut self) {
        self.key.fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// draft-irtf-cfrg-xchacha-03, A.3.1.
    #[test]
    fn the_drafts_vector() {
        let key: [u8; 32] = hex("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f")
            .try_into()
            .unwrap();
        let nonce: [u8; 24] = hex("404142434445464748494a4b4c4d4e4f5051525354555657")
            .try_into()
            .unwrap();
        let aad = hex("50515253c0c1c2c3c4c5c6c7");
        let plain = b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.";
        let cipher = hex(
            "bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb
             731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b452
             2f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff9
             21f9664c97637da9768812f615c68b13b52e",
        );
        let tag: [u8; 16] = hex("c0875924c1c7987947deafd8780acf49").try_into().unwrap();

        let x = XChaCha::new(key);
        let mut buf = plain.to_vec();
        assert_eq!(x.seal(&nonce, &aad, &mut buf), tag);
        assert_eq!(buf, cipher);
        x.open(&nonce, &aad, &mut buf, tag).unwrap();
        assert_eq!(buf, plain);
    }

    /// The same bytes as the `chacha20poly1305` crate, at every length around the
    /// block sizes.
    #[test]
    fn the_same_bytes_as_the_pure_rust_aead() {
        use chacha20poly1305::aead::AeadInOut;
        use chacha20poly1305::{KeyInit, XChaCha20Poly1305, XNonce};
        let key = [7u8; 32];
        let theirs = XChaCha20Poly1305::new(&key.into());
        let ours = XChaCha::new(key);
        for len in (0..200).chain([511, 512, 513, 4096]) {
            let nonce = [len as u8; 24];
            let aad = vec![0xa5; len % 70];
            let plain: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let mut a = plain.clone();
            let mut b = plain.clone();
            let t = theirs
                .encrypt_inout_detached(&XNonce::from(nonce), &aad, (&mut a[..]).into())
                .unwrap();
            assert_eq!(
                ours.seal(&nonce, &aad, &mut b),
                t.as_slice(),
                "tag, {len} bytes"
            );
            assert_eq!(a, b, "ciphertext, {len} bytes");
            ours.open(&nonce, &aad, &mut b, t.into()).unwrap();
            assert_eq!(b, plain);
        }
    }

    #[test]
    fn a_changed_byte_anywhere_is_refused_and_nothing_is_decrypted() {
        let x = XChaCha::new([9u8; 32]);
        let nonce = [3u8; 24];
        let mut buf = b"a state".to_vec();
        let tag = x.seal(&nonce, b"bound", &mut buf);
        let sealed = buf.clone();
        let mut other_nonce = nonce;
        other_nonce[20] ^= 1;
        let mut other_tag = tag;
        other_tag[0] ^= 1;
        let mut other_text = sealed.clone();
        other_text[2] ^= 1;
        for (n, aad, mut b, t) in [
            (other_nonce, &b"bound"[..], sealed.clone(), tag),
            (nonce, &b"bounD"[..], sealed.clone(), tag),
            (nonce, &b"bound"[..], sealed.clone(), other_tag),
            (nonce, &b"bound"[..], other_text.clone(), tag),
        ] {
            assert_eq!(x.open(&n, aad, &mut b, t), Err(Forged));
            assert!(b.iter().all(|&c| c == 0), "no plaintext is left behind");
        }
        let other_key = XChaCha::new([8u8; 32]);
        let mut b = sealed;
        assert_eq!(other_key.open(&nonce, b"bound", &mut b, tag), Err(Forged));
    }
}
