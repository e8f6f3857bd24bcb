//! A minimal blocking HTTP/1.1 client over one keep-alive TCP connection, for the REST load
//! generator: it writes a request, reads the status line, headers and a `Content-Length`
//! body, and nothing else. Small enough that the generator's own cost stays a few
//! microseconds per request, so the figures are the server's.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;

/// One connection.
#[derive(Debug)]
pub struct Connection {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    host: String,
    request: Vec<u8>,
}

/// A response: status and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// HTTP status code.
    pub status: u16,
    /// Body bytes.
    pub body: Vec<u8>,
}

fn invalid(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.to_owned())
}

impl Connection {
    /// Connects to `host:port`.
    pub fn open(address: &str) -> io::Result<Self> {
        let stream = TcpStream::connect(address)?;
        stream.set_nodelay(true)?;
        Ok(Self {
            reader: BufReader::with_capacity(64 * 1024, stream.try_clone()?),
            writer: stream,
            host: address.to_owned(),
            request: Vec::with_capacity(1024),
        })
    }

    /// Sends one request and reads its response.
    pub fn send(
        &mut self,
        method: &str,
        path: &str,
        bearer: Option<&str>,
        body: Option<&str>,
    ) -> io::Result<Response> {
        self.request.clear();
        write!(
            self.request,
            "{method} {path} HTTP/1.1\r\nHost: {}\r\n",
            self.host
        )?;
        if let Some(key) = bearer {
            write!(self.request, "Authorization: Bearer {key}\r\n")?;
        }
        match body {
            Some(body) => write!(
                self.request,
                "Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )?,
            None => self.request.extend_from_slice(b"\r\n"),
        }
        self.writer.write_all(&self.request)?;
        self.read_response()
    }

    fn read_response(&mut self) -> io::Result<Response> {
        let mut line = String::new();
        self.reader.read_line(&mut line)?;
        let status = line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| invalid("bad status line"))?;
        let mut length = 0usize;
        loop {
            line.clear();
            if self.reader.read_line(&mut line)? == 0 {
                return Err(invalid("connection closed in headers"));
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().map_err(|_| invalid("bad length"))?;
            }
        }
        let mut body = vec![0u8; length];
        self.reader.read_exact(&mut body)?;
        Ok(Response { status, body })
    }
}

/// The string value of `"field":"..."` in a flat JSON body, without a JSON parser.
pub fn json_field<'a>(body: &'a [u8], field: &str) -> Option<&'a str> {
    let text = std::str::from_utf8(body).ok()?;
    let key = format!("\"{field}\":\"");
    let start = text.find(&key)? + key.len();
    let end = text[start..].find('"')? + start;
    Some(&text[start..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn talks_to_a_canned_server() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let address = listener.local_addr().expect("addr").to_string();
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().expect("accept");
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            for _ in 0..2 {
                let mut line = String::new();
                let mut length = 0;
                loop {
                    line.clear();
                    reader.read_line(&mut line).expect("read");
                    if line == "\r\n" {
                        break;
                    }
                    if let Some(v) = line.strip_prefix("Content-Length: ") {
                        length = v.trim().parse().expect("length");
                    }
                }
                let mut body = vec![0; length];
                reader.read_exact(&mut body).expect("body");
                let reply = format!("{{\"order_id\":\"x{}\"}}", body.len());
                write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{reply}",
                    reply.len()
                )
                .expect("write");
            }
        });
        let mut c = Connection::open(&address).expect("connect");
        let r = c
            .send("POST", "/v1/x", Some("k"), Some("{\"a\":1}"))
            .expect("first");
        assert_eq!(r.status, 200);
        assert_eq!(json_field(&r.body, "order_id"), Some("x7"));
        let r = c
            .send("GET", "/v1/y", None, None)
            .expect("second, same connection");
        assert_eq!(json_field(&r.body, "order_id"), Some("x0"));
        server.join().expect("server");
    }
}
