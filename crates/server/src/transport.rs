//! One connection's socket after startup: frontend messages framed and
//! decoded by [`crate::frontend`], backend messages ([`crate::backend`])
//! encoded into one output buffer that is written out when the protocol
//! says so (at ReadyForQuery, Flush, an error, or when it grows large).

use bytes::BytesMut;
use pgwire::tokio::server::MaybeTls;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::backend::Message;
use crate::frontend::{decode, frame, Frame, Frontend, Refused};

/// Output is written once this much is buffered, even mid-result.
const WRITE_BATCH: usize = 64 << 10;

/// A connection's socket and its buffers.
pub struct Transport {
    io: MaybeTls,
    input: BytesMut,
    /// Encoded backend messages not yet written (a `Vec`: the encoders'
    /// fixed-width stores inline into it, where `BytesMut` went through
    /// a slice copy per field).
    output: Vec<u8>,
    max_message_size: usize,
}

impl Transport {
    /// Takes over `io` from startup, with whatever it had already read.
    pub fn new(io: MaybeTls, input: BytesMut, max_message_size: usize) -> Transport {
        Transport { io, input, output: Vec::with_capacity(8 << 10), max_message_size }
    }

    /// The next message: `Ok(None)` at the end of the stream. Cancel-safe:
    /// bytes read before a cancellation stay in the input buffer.
    pub async fn read(&mut self) -> std::io::Result<Option<Result<Frontend, Refused>>> {
        loop {
            match frame(&mut self.input, self.max_message_size) {
                Err(e) => return Ok(Some(Err(Refused::Fatal(e)))),
                Ok(Frame::Message(ty, body)) => {
                    return Ok(Some(decode(ty, body).map_err(|error| Refused::Error { ty, error })))
                }
                Ok(Frame::Need(n)) => {
                    // Room for this message only: its length was checked
                    // against the limit before this reservation.
                    self.input.reserve(n.saturating_sub(self.input.len()).max(4096));
                    if self.io.read_buf(&mut self.input).await? == 0 {
                        return Ok(None);
                    }
                }
            }
        }
    }

    /// Queues `message`; writes the buffer out if it has grown large.
    pub async fn send(&mut self, message: impl Message) -> std::io::Result<()> {
        message.encode(&mut self.output)?;
        if self.output.len() >= WRITE_BATCH {
            self.flush().await?;
        }
        Ok(())
    }

    /// Writes out everything queued.
    pub async fn flush(&mut self) -> std::io::Result<()> {
        if !self.output.is_empty() {
            self.io.write_all(&self.output).await?;
            self.output.clear();
        }
        self.io.flush().await
    }
}
