//! The latency-percentile plot of a comparison, as a PNG: one line per engine, latency (log
//! scale) against percentile (p50 to p99.999, spaced by nines). Drawn on a plain RGB canvas
//! with a small built-in pixel font, so no system font or plotting library is needed.

use crate::harness::EngineReport;

const WIDTH: usize = 960;
const HEIGHT: usize = 540;
const LEFT: usize = 80;
const RIGHT: usize = 270;
const TOP: usize = 40;
const BOTTOM: usize = 60;

/// Quantiles along the x axis, with their labels.
const XS: [(f64, &str); 6] = [
    (0.5, "p50"),
    (0.9, "p90"),
    (0.99, "p99"),
    (0.999, "p99.9"),
    (0.9999, "p99.99"),
    (0.99999, "p99.999"),
];

const COLOURS: [[u8; 3]; 6] = [
    [214, 39, 40],
    [31, 119, 180],
    [44, 160, 44],
    [255, 127, 14],
    [148, 103, 189],
    [140, 86, 75],
];

/// 5x7 glyphs, one string of 7 rows of 5 pixels per character.
#[rustfmt::skip] // one glyph a line, its rows top to bottom
const GLYPHS: [(char, [&str; 7]); 44] = [
    ('0', [".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."]),
    ('1', ["..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."]),
    ('2', [".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"]),
    ('3', ["####.", "....#", "....#", ".###.", "....#", "....#", "####."]),
    ('4', ["...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."]),
    ('5', ["#####", "#....", "####.", "....#", "....#", "#...#", ".###."]),
    ('6', [".###.", "#....", "#....", "####.", "#...#", "#...#", ".###."]),
    ('7', ["#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."]),
    ('8', [".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."]),
    ('9', [".###.", "#...#", "#...#", ".####", "....#", "....#", ".###."]),
    ('a', [".....", ".....", ".###.", "....#", ".####", "#...#", ".####"]),
    ('b', ["#....", "#....", "####.", "#...#", "#...#", "#...#", "####."]),
    ('c', [".....", ".....", ".####", "#....", "#....", "#....", ".####"]),
    ('d', ["....#", "....#", ".####", "#...#", "#...#", "#...#", ".####"]),
    ('e', [".....", ".....", ".###.", "#...#", "#####", "#....", ".###."]),
    ('f', ["..##.", ".#...", "####.", ".#...", ".#...", ".#...", ".#..."]),
    ('g', [".....", ".####", "#...#", "#...#", ".####", "....#", ".###."]),
    ('h', ["#....", "#....", "####.", "#...#", "#...#", "#...#", "#...#"]),
    ('i', ["..#..", ".....", ".##..", "..#..", "..#..", "..#..", ".###."]),
    ('j', ["...#.", ".....", "..##.", "...#.", "...#.", "#..#.", ".##.."]),
    ('k', ["#....", "#....", "#..#.", "#.#..", "##...", "#.#..", "#..#."]),
    ('l', [".##..", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."]),
    ('m', [".....", ".....", "##.#.", "#.#.#", "#.#.#", "#.#.#", "#.#.#"]),
    ('n', [".....", ".....", "####.", "#...#", "#...#", "#...#", "#...#"]),
    ('o', [".....", ".....", ".###.", "#...#", "#...#", "#...#", ".###."]),
    ('p', [".....", "####.", "#...#", "#...#", "####.", "#....", "#...."]),
    ('q', [".....", ".####", "#...#", "#...#", ".####", "....#", "....#"]),
    ('r', [".....", ".....", "#.##.", "##..#", "#....", "#....", "#...."]),
    ('s', [".....", ".....", ".####", "#....", ".###.", "....#", "####."]),
    ('t', [".#...", ".#...", "####.", ".#...", ".#...", ".#..#", "..##."]),
    ('u', [".....", ".....", "#...#", "#...#", "#...#", "#..##", ".##.#"]),
    ('v', [".....", ".....", "#...#", "#...#", "#...#", ".#.#.", "..#.."]),
    ('w', [".....", ".....", "#...#", "#.#.#", "#.#.#", "#.#.#", ".#.#."]),
    ('x', [".....", ".....", "#...#", ".#.#.", "..#..", ".#.#.", "#...#"]),
    ('y', [".....", "#...#", "#...#", "#...#", ".####", "....#", ".###."]),
    ('z', [".....", ".....", "#####", "...#.", "..#..", ".#...", "#####"]),
    ('.', [".....", ".....", ".....", ".....", ".....", ".##..", ".##.."]),
    ('-', [".....", ".....", ".....", "#####", ".....", ".....", "....."]),
    ('/', ["....#", "....#", "...#.", "..#..", ".#...", "#....", "#...."]),
    ('(', ["...#.", "..#..", ".#...", ".#...", ".#...", "..#..", "...#."]),
    (')', [".#...", "..#..", "...#.", "...#.", "...#.", "..#..", ".#..."]),
    (',', [".....", ".....", ".....", ".....", ".##..", "..#..", ".#..."]),
    (':', [".....", ".##..", ".##..", ".....", ".##..", ".##..", "....."]),
    (' ', [".....", ".....", ".....", ".....", ".....", ".....", "....."]),
];

/// The glyph of `c`, if the font has one.
fn glyph(c: char) -> Option<[&'static str; 7]> {
    GLYPHS.iter().find(|(g, _)| *g == c).map(|&(_, rows)| rows)
}

struct Canvas {
    pixels: Vec<u8>,
}

impl Canvas {
    fn new() -> Self {
        Self {
            pixels: vec![255; WIDTH * HEIGHT * 3],
        }
    }

    fn set(&mut self, x: i64, y: i64, colour: [u8; 3]) {
        if (0..WIDTH as i64).contains(&x) && (0..HEIGHT as i64).contains(&y) {
            let i = (y as usize * WIDTH + x as usize) * 3;
            self.pixels[i..i + 3].copy_from_slice(&colour);
        }
    }

    /// A line two pixels thick (Bresenham, doubled).
    fn line(&mut self, (x0, y0): (i64, i64), (x1, y1): (i64, i64), colour: [u8; 3], thick: bool) {
        let (dx, dy) = ((x1 - x0).abs(), -(y1 - y0).abs());
        let (sx, sy) = (if x0 < x1 { 1 } else { -1 }, if y0 < y1 { 1 } else { -1 });
        let (mut x, mut y, mut err) = (x0, y0, dx + dy);
        loop {
            self.set(x, y, colour);
            if thick {
                self.set(x, y + 1, colour);
                self.set(x + 1, y, colour);
            }
            if x == x1 && y == y1 {
                break;
            }
            let e2 = 2 * err;
            if e2 >= dy {
                err += dy;
                x += sx;
            }
            if e2 <= dx {
                err += dx;
                y += sy;
            }
        }
    }

    /// Text in the pixel font (lower-cased), scaled `scale` times, top-left at (x, y).
    fn text(&mut self, x: i64, y: i64, text: &str, colour: [u8; 3], scale: i64) {
        for (k, c) in text.to_lowercase().chars().enumerate() {
            let Some(rows) = glyph(c) else { continue };
            for (r, row) in rows.iter().enumerate() {
                for (col, bit) in row.bytes().enumerate() {
                    if bit != b'#' {
                        continue;
                    }
                    for dy in 0..scale {
                        for dx in 0..scale {
                            self.set(
                                x + (k as i64 * 6 + col as i64) * scale + dx,
                                y + r as i64 * scale + dy,
                                colour,
                            );
                        }
                    }
                }
            }
        }
    }

    /// The canvas as a PNG file (8-bit RGB, zlib-compressed rows).
    fn png(&self) -> Vec<u8> {
        let mut raw = Vec::with_capacity((WIDTH * 3 + 1) * HEIGHT);
        for row in self.pixels.chunks(WIDTH * 3) {
            raw.push(0); // filter: none
            raw.extend_from_slice(row);
        }
        let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
        let mut header = Vec::with_capacity(13);
        header.extend_from_slice(&(WIDTH as u32).to_be_bytes());
        header.extend_from_slice(&(HEIGHT as u32).to_be_bytes());
        header.extend_from_slice(&[8, 2, 0, 0, 0]);
        chunk(&mut out, b"IHDR", &header);
        chunk(
            &mut out,
            b"IDAT",
            &miniz_oxide::deflate::compress_to_vec_zlib(&raw, 6),
        );
        chunk(&mut out, b"IEND", &[]);
        out
    }
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let mut crc = crc32fast::Hasher::new();
    crc.update(kind);
    crc.update(data);
    out.extend_from_slice(&crc.finalize().to_be_bytes());
}

/// The plot of every timed engine of a comparison, as PNG bytes.
pub fn latency_png(workload: &str, reports: &[EngineReport]) -> Vec<u8> {
    let curves: Vec<(&str, Vec<f64>)> = reports
        .iter()
        .filter(|r| !r.runs.is_empty())
        .map(|r| {
            let ys = XS
                .iter()
                .map(|&(q, _)| r.percentile(q).unwrap_or(1.0).max(1.0))
                .collect();
            (r.name, ys)
        })
        .collect();
    let axes = Axes::of(curves.iter().flat_map(|(_, ys)| ys.iter().copied()));
    let mut canvas = Canvas::new();
    axes.draw(&mut canvas, workload);
    for (k, (name, ys)) in curves.iter().enumerate() {
        let colour = COLOURS[k % COLOURS.len()];
        for i in 1..ys.len() {
            let from = (axes.x_of(i - 1), axes.y_of(ys[i - 1]));
            canvas.line(from, (axes.x_of(i), axes.y_of(ys[i])), colour, true);
        }
        let ly = TOP as i64 + 10 + 24 * k as i64;
        let lx = (WIDTH - RIGHT) as i64 + 16;
        canvas.line((lx, ly + 6), (lx + 24, ly + 6), colour, true);
        canvas.text(lx + 32, ly, name, BLACK, 2);
    }
    canvas.png()
}

const BLACK: [u8; 3] = [0, 0, 0];
const GREY: [u8; 3] = [215, 215, 215];

/// The plot's axes: percentiles across, latency up on a log scale of whole decades.
struct Axes {
    lo_exp: i32,
    hi_exp: i32,
}

impl Axes {
    /// Decades that show every value: at least one, within 1 ns .. 10 s (nothing
    /// measured: 1 to 10 ns).
    fn of(values: impl Iterator<Item = f64> + Clone) -> Self {
        let lo = values.clone().fold(f64::INFINITY, f64::min);
        let hi = values.fold(1.0, f64::max);
        let lo_exp = if lo.is_finite() {
            lo.log10().floor() as i32
        } else {
            0
        }
        .clamp(0, 9);
        let hi_exp = (hi.log10().ceil() as i32).clamp(lo_exp + 1, 10);
        Self { lo_exp, hi_exp }
    }

    fn x_of(&self, i: usize) -> i64 {
        let plot_w = (WIDTH - LEFT - RIGHT) as f64;
        LEFT as i64 + (plot_w * i as f64 / (XS.len() - 1) as f64) as i64
    }

    fn y_of(&self, v: f64) -> i64 {
        let plot_h = (HEIGHT - TOP - BOTTOM) as f64;
        let t = (v.log10() - f64::from(self.lo_exp)) / f64::from(self.hi_exp - self.lo_exp);
        (TOP as f64 + plot_h * (1.0 - t)) as i64
    }

    /// Grid lines and labels of both axes, the axes, and the title.
    fn draw(&self, canvas: &mut Canvas, workload: &str) {
        for e in self.lo_exp..=self.hi_exp {
            let y = self.y_of(10f64.powi(e));
            canvas.line((LEFT as i64, y), ((WIDTH - RIGHT) as i64, y), GREY, false);
            let label = decade_label(e);
            let x = LEFT as i64 - 8 - 12 * label.len() as i64;
            canvas.text(x, y - 7, &label, BLACK, 2);
        }
        let bottom = (HEIGHT - BOTTOM) as i64;
        for (i, (_, label)) in XS.iter().enumerate() {
            let x = self.x_of(i);
            canvas.line((x, TOP as i64), (x, bottom), GREY, false);
            canvas.text(x - 6 * label.len() as i64, bottom + 10, label, BLACK, 2);
        }
        let (left, right) = (LEFT as i64, (WIDTH - RIGHT) as i64);
        canvas.line((left, bottom), (right, bottom), BLACK, false);
        canvas.line((left, TOP as i64), (left, bottom), BLACK, false);
        let title = format!("{workload}: latency per command");
        canvas.text(left, 12, &title, BLACK, 2);
    }
}

/// The label of 10^`e` nanoseconds.
fn decade_label(e: i32) -> String {
    if e >= 9 {
        format!("{}s", 10i64.pow((e - 9) as u32))
    } else if e >= 6 {
        format!("{}ms", 10i64.pow((e - 6) as u32))
    } else if e >= 3 {
        format!("{}us", 10i64.pow((e - 3) as u32))
    } else {
        format!("{}ns", 10i64.pow(e.max(0) as u32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_label_character_has_a_glyph_of_seven_rows_of_five() {
        for c in "0123456789abcdefghijklmnopqrstuvwxyz.-/(),: ".chars() {
            let rows = glyph(c).unwrap_or_else(|| panic!("no glyph for {c:?}"));
            assert!(rows.iter().all(|r| r.len() == 5), "{c:?}");
        }
    }

    #[test]
    fn the_png_has_its_signature_header_and_checksums() {
        let png = latency_png("empty", &[]);
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(&png[12..16], b"IHDR");
        assert_eq!(
            u32::from_be_bytes([png[16], png[17], png[18], png[19]]),
            WIDTH as u32
        );
        let crc = crc32fast::hash(&png[12..29]);
        assert_eq!(
            u32::from_be_bytes([png[29], png[30], png[31], png[32]]),
            crc
        );
        assert!(
            png.ends_with(&[0xAE, 0x42, 0x60, 0x82]),
            "IEND's CRC closes the file"
        );
    }
}
