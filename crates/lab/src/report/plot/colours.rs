//! Series colours that stay the same from panel to panel.

use plotters::style::RGBColor;

/// Tableau's ten categorical colours: distinct on screen and in print, and
/// familiar to anyone who has read a matplotlib chart.
const PALETTE: [RGBColor; 10] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x7f, 0x7f, 0x7f),
    RGBColor(0xbc, 0xbd, 0x22),
    RGBColor(0x17, 0xbe, 0xcf),
];

/// Assigns each series label a colour, in order of first appearance.
///
/// Keying by label rather than by position within a panel means a variant
/// keeps its colour even in a panel where another series is missing, so a
/// reader can follow one variant across the whole figure.
#[derive(Debug, Default)]
pub(crate) struct ColourKey {
    labels: Vec<String>,
}

impl ColourKey {
    /// Registers labels in the order given; repeats keep their first colour.
    pub(crate) fn new<'a>(labels: impl IntoIterator<Item = &'a str>) -> ColourKey {
        let mut key = ColourKey::default();
        for label in labels {
            if !key.labels.iter().any(|known| known == label) {
                key.labels.push(label.to_owned());
            }
        }
        key
    }

    /// The colour for `label`; unknown labels share the first colour.
    pub(crate) fn colour(&self, label: &str) -> RGBColor {
        let index = self.labels.iter().position(|known| known == label).unwrap_or(0);
        PALETTE[index % PALETTE.len()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_label_same_colour() {
        let key = ColourKey::new(["baseline", "csn", "baseline", "xip"]);
        assert_eq!(key.colour("baseline"), PALETTE[0]);
        assert_eq!(key.colour("csn"), PALETTE[1]);
        assert_eq!(key.colour("xip"), PALETTE[2]);
    }
}
