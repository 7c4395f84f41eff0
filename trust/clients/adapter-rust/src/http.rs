//! HTTP/1.1 over a Unix-domain socket, written by hand: one new connection per request,
//! `Connection: close`, the reply read until it is complete (Content-Length, chunked, or EOF).

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

pub struct Response {
    pub status: u16,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

fn invalid(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.to_string())
}

/// Sends one request on a fresh connection and reads its reply.
///
/// `headers` are written as given, after `Host`; `Content-Length` and `Connection: close`
/// are added here. The read timeout covers each read, so a long poll needs one longer than
/// its `waitSeconds`.
pub fn request(
    socket_path: &str,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    read_timeout: Duration,
) -> io::Result<Response> {
    let mut stream = UnixStream::connect(socket_path)?;
    stream.set_read_timeout(Some(read_timeout))?;
    stream.set_write_timeout(Some(Duration::from_secs(5)))?;

    let mut head = format!("{} {} HTTP/1.1\r\nHost: localhost\r\n", method, target);
    for (name, value) in headers {
        head.push_str(name);
        head.push_str(": ");
        head.push_str(value);
        head.push_str("\r\n");
    }
    head.push_str(&format!("Content-Length: {}\r\nConnection: close\r\n\r\n", body.len()));
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body);
    stream.write_all(&bytes)?;
    stream.flush()?;

    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 8192];
    loop {
        if let Some(response) = parse(&buf, false)? {
            return Ok(response);
        }
        let count = stream.read(&mut chunk)?;
        if count == 0 {
            // EOF: the reply is complete only if it was delimited by the close.
            return parse(&buf, true)?.ok_or_else(|| invalid("connection closed before a whole reply"));
        }
        buf.extend_from_slice(&chunk[..count]);
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Parses a reply from `buf`; Ok(None) when more bytes are needed.
fn parse(buf: &[u8], at_eof: bool) -> io::Result<Option<Response>> {
    let Some(head_end) = find(buf, b"\r\n\r\n") else {
        return Ok(None);
    };
    let head = std::str::from_utf8(&buf[..head_end]).map_err(|_| invalid("reply head is not UTF-8"))?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or("");
    if !version.starts_with("HTTP/1.") {
        return Err(invalid("not an HTTP/1.x reply"));
    }
    let status: u16 = parts.next().unwrap_or("").parse().map_err(|_| invalid("bad status code"))?;
    let mut headers = Vec::new();
    for line in lines {
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
    }
    let rest = &buf[head_end + 4..];
    let response = |body: Vec<u8>| Response { status, headers: headers.clone(), body };

    if (100..200).contains(&status) {
        // An interim reply (100 Continue): skip it and parse what follows.
        return parse(rest, at_eof);
    }
    if status == 204 || status == 304 {
        return Ok(Some(response(Vec::new())));
    }
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.to_ascii_lowercase().contains("chunked"));
    if chunked {
        return Ok(dechunk(rest)?.map(response));
    }
    if let Some((_, length)) = headers.iter().find(|(k, _)| k == "content-length") {
        let length: usize = length.parse().map_err(|_| invalid("bad Content-Length"))?;
        if rest.len() >= length {
            return Ok(Some(response(rest[..length].to_vec())));
        }
        return Ok(None);
    }
    // Neither length nor chunks: the body runs to the close.
    if at_eof {
        Ok(Some(response(rest.to_vec())))
    } else {
        Ok(None)
    }
}

/// Decodes a chunked body; Ok(None) until the last chunk has arrived.
fn dechunk(mut rest: &[u8]) -> io::Result<Option<Vec<u8>>> {
    let mut body = Vec::new();
    loop {
        let Some(line_end) = find(rest, b"\r\n") else {
            return Ok(None);
        };
        let size_text = std::str::from_utf8(&rest[..line_end]).map_err(|_| invalid("bad chunk size"))?;
        let size_text = size_text.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16).map_err(|_| invalid("bad chunk size"))?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            // Trailers (if any) end with an empty line; we need not read them.
            return Ok(Some(body));
        }
        if rest.len() < size + 2 {
            return Ok(None);
        }
        body.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_length() {
        let raw = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-A: b\r\n\r\n{}";
        let r = parse(raw, false).unwrap().unwrap();
        assert_eq!(r.status, 200);
        assert_eq!(r.body, b"{}");
        assert_eq!(r.header("x-a"), Some("b"));
        assert!(parse(&raw[..raw.len() - 1], false).unwrap().is_none());
    }

    #[test]
    fn chunked() {
        let raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
        assert_eq!(parse(raw, false).unwrap().unwrap().body, b"abcde");
    }

    #[test]
    fn no_content() {
        let raw = b"HTTP/1.1 204 No Content\r\n\r\n";
        assert_eq!(parse(raw, false).unwrap().unwrap().status, 204);
    }
}
