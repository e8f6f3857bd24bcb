//! The rolling 30-day traded volume of one holder in one fee group, which selects its tier.
//!
//! Every fill reads the tier of both holders and adds to both windows. The daily ring is 30
//! buckets of 32 bytes, so keeping it in line put the day, the running sum and the tier a
//! kilobyte away from the bucket a fill adds to: two cold lines per holder per fill on a
//! market with thousands of holders. Now what a fill touches sits in one 64-byte line (the
//! running sum, the day, the tier, and today's volume not yet written to its bucket) and
//! the ring lives out of line, written when the day changes. Images, the state hash and
//! equality see the ring as if today's volume were written, so they match the layout this
//! replaces bit for bit.

use super::FeeGroup;

/// Days in the running-volume window.
pub const VOLUME_WINDOW_DAYS: usize = 30;
const NANOS_PER_DAY: i64 = 86_400 * 1_000_000_000;

type Ring = [(i64, i128); VOLUME_WINDOW_DAYS];

/// Traded volume of one holder in one fee group over the last 30 UTC days (today included),
/// in daily buckets, with the running sum and the active tier cached.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(from = "SavedWindow")]
#[repr(align(64))]
pub(crate) struct VolumeWindow {
    /// Volume inside the window ending on `as_of_day`, today's included.
    running: i128,
    /// Volume added on `as_of_day` and not yet written to its bucket.
    today: i128,
    as_of_day: i64,
    pub(crate) tier: usize,
    /// An add since the ring was last written (a zero add claims its bucket too).
    pending: bool,
    ring: Box<Ring>,
}

/// The layout snapshots of the serde format kept: the ring in line, nothing pending.
#[derive(serde::Deserialize)]
struct SavedWindow {
    buckets: Ring,
    running: i128,
    as_of_day: i64,
    tier: usize,
}

impl From<SavedWindow> for VolumeWindow {
    fn from(saved: SavedWindow) -> Self {
        Self {
            running: saved.running,
            today: 0,
            as_of_day: saved.as_of_day,
            tier: saved.tier,
            pending: false,
            ring: Box::new(saved.buckets),
        }
    }
}

impl Default for VolumeWindow {
    fn default() -> Self {
        Self {
            running: 0,
            today: 0,
            as_of_day: i64::MIN,
            tier: 0,
            pending: false,
            ring: Box::new([(i64::MIN, 0); VOLUME_WINDOW_DAYS]),
        }
    }
}

impl PartialEq for VolumeWindow {
    fn eq(&self, other: &Self) -> bool {
        (self.running, self.as_of_day, self.tier) == (other.running, other.as_of_day, other.tier)
            && self.buckets() == other.buckets()
    }
}

impl Eq for VolumeWindow {}

/// UTC day number of a time.
pub(crate) fn day_of(time: crate::ids::Timestamp) -> i64 {
    time.0.div_euclid(NANOS_PER_DAY)
}

fn bucket_of(day: i64) -> usize {
    day.rem_euclid(VOLUME_WINDOW_DAYS as i64) as usize
}

/// Adds `volume` to `day`'s bucket, claiming the bucket from an older day first.
fn add_to_ring(ring: &mut Ring, day: i64, volume: i128) {
    let slot = &mut ring[bucket_of(day)];
    if slot.0 != day {
        *slot = (day, 0);
    }
    slot.1 += volume;
}

impl VolumeWindow {
    /// The daily buckets with today's pending volume written in.
    fn buckets(&self) -> Ring {
        let mut ring = *self.ring;
        if self.pending {
            add_to_ring(&mut ring, self.as_of_day, self.today);
        }
        ring
    }

    /// Writes today's pending volume to its bucket.
    fn flush(&mut self) {
        if self.pending {
            add_to_ring(&mut self.ring, self.as_of_day, self.today);
            (self.today, self.pending) = (0, false);
        }
    }

    /// Sum of the buckets inside the window ending on `day`.
    pub(crate) fn volume_on(&self, day: i64) -> i128 {
        if day == self.as_of_day {
            return self.running;
        }
        sum_on(&self.buckets(), day)
    }

    /// Moves the window to `day`, dropping expired days, and re-selects the tier.
    #[inline]
    pub(crate) fn roll(&mut self, day: i64, group: &FeeGroup) {
        if day != self.as_of_day {
            self.flush();
            self.running = self.running_on(day);
            self.as_of_day = day;
            self.tier = group.tier_at(self.running);
        }
    }

    /// The running sum moved from `as_of_day` forward to `day`: the buckets of the days
    /// that leave the window are taken off, one bucket read per day passed, where summing
    /// the ring read all 30 (15 lines, cold for a holder's first fill of the day). A
    /// window never moved holds nothing, so its first move reads no bucket at all: that
    /// scan was a third of the fee look-up's cache misses on a market of 20,000 holders.
    /// After a gap of a whole window, or backwards, the ring is summed anew. Relies on
    /// what `check` asks of a window: no bucket after `as_of_day`, and `running` its sum.
    fn running_on(&self, day: i64) -> i128 {
        let window = VOLUME_WINDOW_DAYS as i64;
        let from = self.as_of_day;
        if from == i64::MIN {
            return 0;
        }
        // A restored window may name any day: a gap too wide for an `i64` is a whole one.
        let gap = day.checked_sub(from);
        if from <= i64::MIN + window || day <= from || gap.is_none_or(|g| g >= window) {
            return sum_on(&self.ring, day);
        }
        let mut running = self.running;
        for leaving in (from - window + 1)..=(day - window) {
            let (bucket_day, volume) = self.ring[bucket_of(leaving)];
            if bucket_day == leaving {
                running -= volume;
            }
        }
        running
    }

    /// Adds volume traded on `day` (after `roll` to that day).
    #[inline]
    pub(crate) fn add(&mut self, day: i64, volume: i128, group: &FeeGroup) {
        if day == self.as_of_day {
            self.today += volume;
            self.pending = true;
        } else {
            add_to_ring(&mut self.ring, day, volume);
        }
        self.running += volume;
        let next = self.tier + 1;
        if next < group.tiers.len() && self.running >= group.tiers[next].volume {
            self.tier = group.tier_at(self.running);
        }
    }

    /// Checks a decoded window against its group: a tier the group has, no negative volume,
    /// no bucket dated after the window's day, and a running sum that is the sum of the
    /// window's buckets (what moving the window forward relies on).
    pub(crate) fn check(&self, group: &FeeGroup) -> Result<(), String> {
        let buckets = self.buckets();
        if self.tier >= group.tiers.len().max(1)
            || self.running < 0
            || buckets.iter().any(|(_, volume)| *volume < 0)
        {
            return Err("a traded-volume window is out of range".into());
        }
        // A moved window's day is a day of the engine's clock: from zero to the horizon.
        let latest = day_of(crate::limits::TIME_HORIZON);
        if self.as_of_day != i64::MIN && !(0..=latest).contains(&self.as_of_day) {
            return Err("a traded-volume window's day is out of range".into());
        }
        if buckets.iter().any(|(day, _)| *day > self.as_of_day)
            || (self.as_of_day != i64::MIN && self.running != sum_on(&buckets, self.as_of_day))
        {
            return Err("a traded-volume window disagrees with its buckets".into());
        }
        Ok(())
    }

    /// The window's saved image: the ring as it stands and the day it was moved to.
    pub(crate) fn image(&self) -> crate::image::VolumeImage {
        crate::image::VolumeImage {
            as_of_day: self.as_of_day,
            buckets: self.buckets().to_vec(),
        }
    }

    /// Rebuilds a window from its image, recomputing the running sum and the tier.
    pub(crate) fn from_image(
        image: crate::image::VolumeImage,
        group: &FeeGroup,
    ) -> Result<Self, String> {
        let ring: Ring = image
            .buckets
            .try_into()
            .map_err(|_| "a traded-volume window of the wrong length".to_owned())?;
        let mut window = Self {
            ring: Box::new(ring),
            ..Self::default()
        };
        // A window never moved has no day to sum up to (and nothing to sum).
        if image.as_of_day != i64::MIN {
            if image.as_of_day < i64::MIN + VOLUME_WINDOW_DAYS as i64 {
                return Err("a traded-volume window's day is out of range".into());
            }
            window.running = sum_on(&window.ring, image.as_of_day);
            window.as_of_day = image.as_of_day;
            window.tier = group.tier_at(window.running);
        }
        Ok(window)
    }

    /// Hash input: the buckets inside the window and the tier.
    pub(crate) fn digest(&self, h: &mut crate::hashing::StateHasher) {
        for (day, volume) in &self.buckets() {
            h.i64(*day);
            h.i128(*volume);
        }
        h.i128(self.running);
        h.i64(self.as_of_day);
        h.u64(self.tier as u64);
    }
}

/// Sum of the buckets inside the window ending on `day`.
fn sum_on(ring: &Ring, day: i64) -> i128 {
    ring.iter()
        .filter(|(d, _)| *d <= day && *d > day - VOLUME_WINDOW_DAYS as i64)
        .map(|(_, v)| v)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The layout this module replaced, kept as the reference: the ring in line, every add
    /// written to its bucket at once.
    #[derive(Clone)]
    struct InlineWindow {
        ring: Ring,
        running: i128,
        as_of_day: i64,
    }

    impl InlineWindow {
        fn roll(&mut self, day: i64) {
            if day != self.as_of_day {
                self.running = sum_on(&self.ring, day);
                self.as_of_day = day;
            }
        }
        fn add(&mut self, day: i64, volume: i128) {
            add_to_ring(&mut self.ring, day, volume);
            self.running += volume;
        }
    }

    fn group() -> FeeGroup {
        let spec = super::super::default_fee_groups().remove(0);
        FeeGroup::build(spec, crate::ids::CurrencyId(0), 2).expect("valid")
    }

    /// Whole euros in cents (the group's volume scale in this test).
    fn eur(whole: i128) -> i128 {
        whole * 100
    }

    #[test]
    fn tiers_follow_volume_as_it_accrues_and_expires() {
        let g = group();
        let mut w = VolumeWindow::default();
        let day = day_of(crate::ids::Timestamp(1_767_225_600_000_000_000));
        w.roll(day, &g);
        assert_eq!(w.tier, 0);
        w.add(day, eur(99_999) + 99, &g);
        assert_eq!(w.tier, 0);
        w.add(day, 1, &g);
        assert_eq!(w.tier, 1, "100000.00 EUR reaches tier 1");
        w.roll(day + 10, &g);
        w.add(day + 10, eur(150_000), &g);
        assert_eq!(w.tier, 2);
        w.roll(day + 29, &g);
        assert_eq!((w.volume_on(day + 29), w.tier), (eur(250_000), 2));
        w.roll(day + 30, &g);
        assert_eq!(
            (w.volume_on(day + 30), w.tier),
            (eur(150_000), 1),
            "day 0 left the window"
        );
        w.roll(day + 40, &g);
        assert_eq!(w.tier, 0);
    }

    /// Found by `snapshot_decode` (fails on the code before: the gap overflowed, a panic
    /// with overflow checks, and in a release build a walk over some 2^63 days): a window
    /// restored as of a day near the start of `i64`, then moved to a real day, sums its
    /// ring anew.
    #[test]
    fn a_window_restored_at_the_far_past_moves_to_today() {
        let g = group();
        let today = day_of(crate::ids::Timestamp(1_767_225_600_000_000_000));
        for far in [i64::MIN + VOLUME_WINDOW_DAYS as i64 + 1, i64::MIN / 2 - 1] {
            let mut buckets = VolumeWindow::default().image().buckets;
            buckets[bucket_of(far)] = (far, 5);
            let image = crate::image::VolumeImage {
                as_of_day: far,
                buckets,
            };
            let mut w = VolumeWindow::from_image(image, &g).expect("a consistent window");
            w.roll(today, &g);
            assert_eq!((w.volume_on(today), w.tier), (0, 0));
        }
    }

    /// Found by `snapshot_decode` (fails on the code before: an overflow panic in the
    /// check's own sum): a window whose day is near the start of `i64`, as a legacy
    /// snapshot can carry, is refused by the load check.
    #[test]
    fn the_check_refuses_a_day_outside_the_clock() {
        let g = group();
        for day in [i64::MIN + 5, -1, day_of(crate::limits::TIME_HORIZON) + 1] {
            let w = VolumeWindow {
                as_of_day: day,
                ..VolumeWindow::default()
            };
            assert!(w.check(&g).is_err(), "day {day}");
        }
        let w = VolumeWindow {
            as_of_day: 20_000,
            ..VolumeWindow::default()
        };
        assert_eq!(w.check(&g), Ok(()));
    }

    #[test]
    fn what_a_fill_touches_is_one_line() {
        assert_eq!(std::mem::size_of::<VolumeWindow>(), 64);
        assert_eq!(std::mem::align_of::<VolumeWindow>(), 64);
    }

    proptest! {
        /// Days that advance by 0 to 39 (gaps past the window included) with adds of any
        /// size (zero included): the same running sum, tier, image and hash input as
        /// writing every add to its bucket and summing the ring at every move, and a
        /// window that passes its check.
        #[test]
        fn matches_the_inline_ring(
            steps in proptest::collection::vec((0i64..160, 0i128..10_000_000_000), 1..60),
            image_at in 0usize..60,
        ) {
            let g = group();
            let mut window = VolumeWindow::default();
            let mut reference = InlineWindow {
                ring: [(i64::MIN, 0); VOLUME_WINDOW_DAYS],
                running: 0,
                as_of_day: i64::MIN,
            };
            let mut day = 20_000;
            for (i, (advance, volume)) in steps.into_iter().enumerate() {
                day += advance / 4;
                window.roll(day, &g);
                reference.roll(day);
                window.add(day, volume, &g);
                reference.add(day, volume);
                prop_assert_eq!(window.running, reference.running);
                prop_assert_eq!(window.tier, g.tier_at(reference.running));
                prop_assert_eq!(window.buckets(), reference.ring);
                prop_assert_eq!(window.check(&g), Ok(()));
                if i == image_at {
                    window = VolumeWindow::from_image(window.image(), &g).expect("restores");
                }
            }
        }
    }
}
