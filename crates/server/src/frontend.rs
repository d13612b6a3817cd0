//! Frontend messages after startup: framing and decoding, validated as
//! PostgreSQL validates them.
//!
//! Framing comes first: a type byte and a length. The length is checked
//! against the type's limit before a byte of the body is buffered, as
//! PostgreSQL's `pq_getmessage` does (10 000 bytes for the small control
//! messages, `max_message_size` for Query, Parse, Bind, CopyData and
//! FunctionCall); an unknown type or a bad length is FATAL, because the
//! stream can no longer be trusted to be at a message boundary.
//!
//! The body is then read with bounds-checked getters that fail like
//! PostgreSQL's `pq_getmsg*` functions: a field that runs past the end is
//! "insufficient data left in message", a string without its NUL is
//! "invalid string in message", bytes left over are "invalid message
//! format", all 08P01 and all only ERROR: the next message still starts at
//! a known place. Checks that need the prepared statement (parameter counts,
//! format codes) are made where the message is executed.

use bytes::{Buf, Bytes, BytesMut};
use snapscale_sql::{SqlError, SqlState};

/// PostgreSQL's PQ_SMALL_MESSAGE_LIMIT: control messages are short.
pub const SMALL_MESSAGE_LIMIT: usize = 10_000;

/// Describe and Close name a statement or a portal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Statement,
    Portal,
}

/// A Bind message, decoded but not yet checked against its statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bind {
    pub portal: String,
    pub statement: String,
    pub param_formats: Vec<i16>,
    /// `None` is SQL NULL (length −1).
    pub params: Vec<Option<Bytes>>,
    pub result_formats: Vec<i16>,
}

/// One frontend message of the query phase.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frontend {
    Query(String),
    Parse {
        name: String,
        query: String,
        param_types: Vec<u32>,
    },
    Bind(Bind),
    Describe {
        target: Target,
        name: String,
    },
    Execute {
        portal: String,
        max_rows: i32,
    },
    Close {
        target: Target,
        name: String,
    },
    Sync,
    Flush,
    Terminate,
    CopyData(Bytes),
    CopyDone,
    CopyFail(String),
    /// The fast-path function call interface (not supported).
    FunctionCall,
}

impl Frontend {
    /// True for the messages of the extended query protocol, which an
    /// error makes the server discard until the next Sync.
    pub fn is_extended(&self) -> bool {
        matches!(
            self,
            Frontend::Parse { .. }
                | Frontend::Bind(_)
                | Frontend::Describe { .. }
                | Frontend::Execute { .. }
                | Frontend::Close { .. }
                | Frontend::Flush
                | Frontend::Sync
        )
    }
}

/// Why a message could not be taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refused {
    /// The stream is broken (unknown type, impossible length): FATAL, and
    /// the connection ends.
    Fatal(SqlError),
    /// This message (of type `ty`) is malformed but its frame was whole:
    /// ERROR, and the next message is read normally.
    Error { ty: u8, error: SqlError },
}

fn violation(message: impl Into<String>) -> SqlError {
    SqlError::new(SqlState::PROTOCOL_VIOLATION, message)
}

/// The largest body a message of type `ty` may declare, or `None` for a
/// type that does not exist in the query phase.
fn limit(ty: u8, max_message_size: usize) -> Option<usize> {
    match ty {
        b'Q' | b'P' | b'B' | b'd' | b'F' => Some(max_message_size),
        b'C' | b'D' | b'E' | b'H' | b'S' | b'X' | b'c' | b'f' => Some(SMALL_MESSAGE_LIMIT),
        _ => None,
    }
}

/// Takes one whole message off the front of `buf`: `Ok(None)` if more
/// bytes are needed (and `buf` is left as it was). The length is checked
/// before the body is waited for, so a declared length is never allocated
/// unless it is within the limit; `need` says how many bytes the caller
/// should make room for.
pub fn frame(buf: &mut BytesMut, max_message_size: usize) -> Result<Frame, SqlError> {
    if buf.len() < 5 {
        return Ok(Frame::Need(5));
    }
    let ty = buf[0];
    let Some(max) = limit(ty, max_message_size) else {
        return Err(violation(format!("invalid frontend message type {ty}")));
    };
    let len = i32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]);
    // The length counts itself: at least 4, at most the type's limit.
    if len < 4 || len as usize - 4 > max {
        return Err(violation("invalid message length"));
    }
    let total = 1 + len as usize;
    if buf.len() < total {
        return Ok(Frame::Need(total));
    }
    let mut message = buf.split_to(total);
    message.advance(5);
    Ok(Frame::Message(ty, message.freeze()))
}

/// What [`frame`] found.
#[derive(Debug)]
pub enum Frame {
    /// The buffer must hold this many bytes before a message can be taken.
    Need(usize),
    Message(u8, Bytes),
}

/// Decodes the body of a message of type `ty`.
pub fn decode(ty: u8, body: Bytes) -> Result<Frontend, SqlError> {
    let mut r = Body(body);
    let message = match ty {
        b'Q' => Frontend::Query(r.string()?),
        b'P' => {
            let name = r.string()?;
            let query = r.string()?;
            let n = r.u16()?;
            let mut param_types = Vec::with_capacity(usize::from(n).min(r.0.len() / 4));
            for _ in 0..n {
                param_types.push(r.u32()?);
            }
            Frontend::Parse { name, query, param_types }
        }
        b'B' => {
            let portal = r.string()?;
            let statement = r.string()?;
            let param_formats = r.i16_list()?;
            let n = r.u16()?;
            let mut params = Vec::with_capacity(usize::from(n).min(r.0.len() / 4));
            for _ in 0..n {
                let len = r.i32()?;
                params.push(if len == -1 { None } else { Some(r.bytes(len)?) });
            }
            let result_formats = r.i16_list()?;
            Frontend::Bind(Bind { portal, statement, param_formats, params, result_formats })
        }
        b'D' | b'C' => {
            let kind = r.u8()?;
            let target = match kind {
                b'S' => Target::Statement,
                b'P' => Target::Portal,
                _ => {
                    let what = if ty == b'D' { "DESCRIBE" } else { "CLOSE" };
                    return Err(violation(format!("invalid {what} message subtype {kind}")));
                }
            };
            let name = r.string()?;
            if ty == b'D' {
                Frontend::Describe { target, name }
            } else {
                Frontend::Close { target, name }
            }
        }
        b'E' => {
            let portal = r.string()?;
            Frontend::Execute { portal, max_rows: r.i32()? }
        }
        b'S' => Frontend::Sync,
        b'H' => Frontend::Flush,
        b'X' => Frontend::Terminate,
        b'd' => return Ok(Frontend::CopyData(r.0)),
        b'c' => Frontend::CopyDone,
        b'f' => Frontend::CopyFail(r.string()?),
        b'F' => return Ok(Frontend::FunctionCall),
        other => return Err(violation(format!("invalid frontend message type {other}"))),
    };
    r.end()?;
    Ok(message)
}

/// A message body with PostgreSQL's `pq_getmsg*` checks.
struct Body(Bytes);

impl Body {
    fn need(&self, n: usize) -> Result<(), SqlError> {
        if self.0.len() < n {
            return Err(violation("insufficient data left in message"));
        }
        Ok(())
    }

    fn u8(&mut self) -> Result<u8, SqlError> {
        self.need(1)?;
        Ok(self.0.get_u8())
    }

    fn u16(&mut self) -> Result<u16, SqlError> {
        self.need(2)?;
        Ok(self.0.get_u16())
    }

    fn i32(&mut self) -> Result<i32, SqlError> {
        self.need(4)?;
        Ok(self.0.get_i32())
    }

    fn u32(&mut self) -> Result<u32, SqlError> {
        self.need(4)?;
        Ok(self.0.get_u32())
    }

    /// A count, then that many int16 (format codes).
    fn i16_list(&mut self) -> Result<Vec<i16>, SqlError> {
        let n = usize::from(self.u16()?);
        self.need(2 * n)?;
        Ok((0..n).map(|_| self.0.get_i16()).collect())
    }

    /// `len` bytes; a negative length other than −1 (NULL, handled by the
    /// caller) is as short as PostgreSQL finds it.
    fn bytes(&mut self, len: i32) -> Result<Bytes, SqlError> {
        let len = usize::try_from(len).map_err(|_| violation("insufficient data left in message"))?;
        self.need(len)?;
        Ok(self.0.split_to(len))
    }

    /// A NUL-terminated string, which must be UTF-8 (the only client
    /// encoding this server speaks).
    fn string(&mut self) -> Result<String, SqlError> {
        let Some(nul) = self.0.iter().position(|&b| b == 0) else {
            return Err(violation("invalid string in message"));
        };
        let raw = self.0.split_to(nul);
        self.0.advance(1);
        String::from_utf8(raw.to_vec()).map_err(|e| invalid_utf8(&raw, e.utf8_error().valid_up_to()))
    }

    fn end(&self) -> Result<(), SqlError> {
        if !self.0.is_empty() {
            return Err(violation("invalid message format"));
        }
        Ok(())
    }
}

/// 22021, naming the bad bytes as PostgreSQL does.
pub fn invalid_utf8(raw: &[u8], at: usize) -> SqlError {
    let shown: Vec<String> = raw[at..].iter().take(2).map(|b| format!("0x{b:02x}")).collect();
    SqlError::new(
        SqlState::CHARACTER_NOT_IN_REPERTOIRE,
        format!("invalid byte sequence for encoding \"UTF8\": {}", shown.join(" ")),
    )
}

#[cfg(test)]
mod tests {
    use bytes::BufMut;

    use super::*;

    fn message(ty: u8, body: &[u8]) -> BytesMut {
        let mut b = BytesMut::new();
        b.put_u8(ty);
        b.put_i32(body.len() as i32 + 4);
        b.put_slice(body);
        b
    }

    fn one(ty: u8, body: &[u8]) -> Result<Frontend, SqlError> {
        let mut buf = message(ty, body);
        match frame(&mut buf, 1 << 20)? {
            Frame::Message(ty, body) => decode(ty, body),
            Frame::Need(n) => panic!("need {n}"),
        }
    }

    fn bind(formats: &[i16], params: &[i32], results: &[i16]) -> Vec<u8> {
        let mut b = BytesMut::new();
        b.put_slice(b"\0s\0");
        b.put_u16(formats.len() as u16);
        formats.iter().for_each(|f| b.put_i16(*f));
        b.put_u16(params.len() as u16);
        for &len in params {
            b.put_i32(len);
            if len > 0 {
                b.put_slice(&vec![b'1'; len as usize]);
            }
        }
        b.put_u16(results.len() as u16);
        results.iter().for_each(|f| b.put_i16(*f));
        b.to_vec()
    }

    #[test]
    fn framing_checks_type_and_length_before_buffering() {
        let mut buf = BytesMut::from(&b"Q\x7f\xff\xff\xff"[..]);
        assert_eq!(frame(&mut buf, 1 << 20).unwrap_err().message, "invalid message length");
        let mut buf = BytesMut::from(&b"S\x00\x00\x00\x02"[..]);
        assert_eq!(frame(&mut buf, 1 << 20).unwrap_err().message, "invalid message length");
        let mut buf = BytesMut::from(&b"S\x00\x00\x27\x15"[..]);
        assert_eq!(
            frame(&mut buf, 1 << 20).unwrap_err().code,
            SqlState::PROTOCOL_VIOLATION,
            "Sync over 10 000 bytes"
        );
        let mut buf = BytesMut::from(&b"Z\x00\x00\x00\x04"[..]);
        assert_eq!(frame(&mut buf, 1 << 20).unwrap_err().message, "invalid frontend message type 90");
        let mut buf = BytesMut::from(&b"Q\x00\x00\x01\x00abc"[..]);
        assert!(matches!(frame(&mut buf, 1 << 20).unwrap(), Frame::Need(257)));
        assert_eq!(buf.len(), 8, "an incomplete message stays in the buffer");
    }

    #[test]
    fn bodies_are_bounds_checked() {
        assert_eq!(one(b'Q', b"select 1\0").unwrap(), Frontend::Query("select 1".into()));
        assert_eq!(one(b'Q', b"select 1").unwrap_err().message, "invalid string in message");
        assert_eq!(one(b'Q', b"select 1\0x").unwrap_err().message, "invalid message format");
        assert_eq!(one(b'Q', b"\xff\xfe\0").unwrap_err().code, SqlState::CHARACTER_NOT_IN_REPERTOIRE);
        assert_eq!(one(b'E', b"\0").unwrap_err().message, "insufficient data left in message");
        assert_eq!(one(b'D', b"X\0").unwrap_err().message, "invalid DESCRIBE message subtype 88");
        assert_eq!(one(b'C', b"Q\0").unwrap_err().message, "invalid CLOSE message subtype 81");
        assert_eq!(one(b'S', b"x").unwrap_err().message, "invalid message format");
    }

    #[test]
    fn bind_lengths() {
        match one(b'B', &bind(&[1], &[1, -1], &[])).unwrap() {
            Frontend::Bind(b) => {
                assert_eq!(b.statement, "s");
                assert_eq!(b.params, vec![Some(Bytes::from_static(b"1")), None]);
            }
            other => panic!("{other:?}"),
        }
        // Only −1 means NULL.
        let err = one(b'B', &bind(&[], &[-7], &[])).unwrap_err();
        assert_eq!(
            (err.code, err.message.as_str()),
            (SqlState::PROTOCOL_VIOLATION, "insufficient data left in message")
        );
        // A length past the end of the message.
        let mut body = bind(&[], &[3], &[]);
        body.truncate(body.len() - 3);
        assert_eq!(one(b'B', &body).unwrap_err().message, "insufficient data left in message");
        // A count of formats with too few of them.
        assert_eq!(
            one(b'B', b"\0\0\x00\x05\x00\x01").unwrap_err().message,
            "insufficient data left in message"
        );
    }
}
