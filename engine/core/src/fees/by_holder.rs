//! Every holder's traded-volume windows, one per fee group, in one flat table indexed by
//! (holder, group). A fill reads both parties' windows; a vector of vectors made each of
//! those reads two dependent loads (the holder's vector, then its window), and with
//! 20,000 holders both were misses (a fifth of the fee look-up's samples in perf).

use super::VolumeWindow;
use crate::ids::HolderId;

/// The windows of every holder, `groups` per holder, holder-major.
#[derive(Debug, Clone, Default)]
pub(crate) struct HolderVolumes {
    groups: usize,
    holders: usize,
    windows: Vec<VolumeWindow>,
}

/// Snapshot format 6 saved one vector of windows per holder.
impl<'de> serde::Deserialize<'de> for HolderVolumes {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let per_holder: Vec<Vec<VolumeWindow>> = serde::Deserialize::deserialize(deserializer)?;
        let groups = per_holder.first().map_or(0, Vec::len);
        Self::from_holders(groups, per_holder).map_err(serde::de::Error::custom)
    }
}

impl HolderVolumes {
    /// No holders yet, `groups` windows each once they come.
    pub(crate) fn new(groups: usize) -> Self {
        Self {
            groups,
            holders: 0,
            windows: Vec::new(),
        }
    }

    /// The table of `per_holder`, each holder's `groups` windows in group order; a holder
    /// with another number of windows is refused.
    pub(crate) fn from_holders(
        groups: usize,
        per_holder: Vec<Vec<VolumeWindow>>,
    ) -> Result<Self, &'static str> {
        let mut table = Self::new(groups);
        table.windows.reserve(per_holder.len() * groups);
        for windows in per_holder {
            if windows.len() != groups {
                return Err("traded volumes do not match the fee groups");
            }
            table.windows.extend(windows);
            table.holders += 1;
        }
        Ok(table)
    }

    /// Adds the next holder, with empty windows.
    pub(crate) fn push_holder(&mut self) {
        let windows = self.windows.len() + self.groups;
        self.windows.resize(windows, VolumeWindow::default());
        self.holders += 1;
    }

    /// Number of holders.
    pub(crate) fn holders(&self) -> usize {
        self.holders
    }

    /// Windows per holder.
    pub(crate) fn groups(&self) -> usize {
        self.groups
    }

    /// The windows of `holder`, in group order.
    pub(crate) fn of(&self, holder: HolderId) -> &[VolumeWindow] {
        let start = holder.0 as usize * self.groups;
        &self.windows[start..start + self.groups]
    }

    /// The window of `holder` in `group`.
    #[inline]
    pub(crate) fn get_mut(&mut self, holder: HolderId, group: usize) -> &mut VolumeWindow {
        debug_assert!(group < self.groups);
        &mut self.windows[holder.0 as usize * self.groups + group]
    }

    /// Every holder's windows, in holder order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &[VolumeWindow]> + '_ {
        (0..self.holders).map(|h| &self.windows[h * self.groups..(h + 1) * self.groups])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_holder_reads_its_own_windows_in_group_order() {
        let mut table = HolderVolumes::new(2);
        for _ in 0..3 {
            table.push_holder();
        }
        let day = 20_000;
        let spec = super::super::default_fee_groups().remove(0);
        let group =
            super::super::FeeGroup::build(spec, crate::ids::CurrencyId(0), 2).expect("valid");
        for (h, g) in [(0u32, 1usize), (2, 0), (2, 1)] {
            let w = table.get_mut(HolderId(h), g);
            w.roll(day, &group);
            w.add(day, i128::from(h * 10) + g as i128 + 1, &group);
        }
        let volumes: Vec<Vec<i128>> = table
            .iter()
            .map(|windows| windows.iter().map(|w| w.volume_on(day)).collect())
            .collect();
        assert_eq!(volumes, vec![vec![0, 2], vec![0, 0], vec![21, 22]]);
        assert_eq!(table.of(HolderId(2))[1].volume_on(day), 22);
        assert_eq!(table.holders(), 3);
    }

    #[test]
    fn a_holder_with_another_number_of_windows_is_refused() {
        let ragged = vec![
            vec![VolumeWindow::default(); 2],
            vec![VolumeWindow::default()],
        ];
        assert!(HolderVolumes::from_holders(2, ragged).is_err());
    }
}
