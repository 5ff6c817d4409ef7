// The shape-aware forecast (watch/forecast.h) on synthetic series: each shape
// is named, fitted on its current regime only, and given a range; shapes that
// never fill give no forecast; the cost stays bounded. Series are sampled
// every 250 ms (fast) or 15 s (slow) and quantized like an allocator's steps.
#include "watch/forecast.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <optional>
#include <random>

#include "watch/alerts.h"

namespace aimem::watch {
namespace {

constexpr double MiB = 1024.0 * 1024.0;
using Points = std::vector<std::pair<int64_t, uint64_t>>;

// Samples mem(t) (MiB) every dt seconds over [0, until], with seeded Gaussian noise (MiB).
Points sample(const std::function<double(double)>& mem, double dt, double until, double noise = 0,
              unsigned seed = 1) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n(0, 1);
  Points p;
  for (double t = 0; t <= until + 1e-9; t += dt)
    p.emplace_back(int64_t(t * 1e6), uint64_t(std::max(0.0, mem(t) + noise * n(rng)) * MiB));
  return p;
}
double steps(double v, double q) { return std::floor(v / q) * q; }

TEST(Forecast, GrowthAfterIdleIsFittedFromTheKneeOnly) {
  // The case: idle, then 20 MiB/s in 5 MiB steps, limit 200 MiB. At
  // 12 s (2 s of growth, 45 MiB) 7.75 s remain. A slope over the whole
  // window (Theil–Sen, the old forecast) says several times that.
  auto mem = [](double t) { return t < 10 ? 5.0 : 5 + steps((t - 10) * 20, 5); };
  Points p = sample(mem, 0.25, 12);
  Forecast f = forecast_exhaustion(p, uint64_t(200 * MiB));
  EXPECT_EQ(f.shape, GrowthShape::steady);
  ASSERT_TRUE(f.tte_s);
  EXPECT_NEAR(*f.tte_s, 7.75, 0.5);
  EXPECT_LE(f.low_s, *f.tte_s);
  EXPECT_GE(f.high_s, *f.tte_s);
  EXPECT_NEAR(f.rate_per_s / MiB, 20, 1);
  EXPECT_NEAR(f.basis_s, 2, 0.3) << "the regime starts at the knee";
  EXPECT_TRUE(f.alert);
  auto whole = theil_sen_per_s(p);
  ASSERT_TRUE(whole);
  EXPECT_GT((200 * MiB - 45 * MiB) / *whole, 3 * 7.75) << "the whole-window slope this replaces";
}

TEST(Forecast, FreshKneeIsNotCredibleYet) {
  // One second of growth: the forecast exists but is not alerted on (2 s of regime needed).
  auto mem = [](double t) { return t < 10 ? 5.0 : 5 + (t - 10) * 20; };
  Forecast f = forecast_exhaustion(sample(mem, 0.25, 11), uint64_t(200 * MiB));
  EXPECT_FALSE(f.alert);
}

TEST(Forecast, ASampleCaughtInsideAStepDoesNotDragTheGrowthAfterIt) {
  // forecast_eval's "step then growth" as a real cgroup recorded it on
  // 2026-12-05: 1 MiB, a sample at 4 and one at 64 MiB while 100 MiB were
  // being touched, 100 MiB flat for 3.5 s, then 12 MiB/s to a 256 MiB limit.
  // With the 64 MiB sample on the regime, one line through it, the flat part
  // and the growth said 3.9 MiB/s and "full in 36 s" when 11 s remained.
  auto mem = [](double t) {
    if (t < 2) return 1.25;
    if (t < 2.25) return 4.0;
    if (t < 2.5) return 64.25;
    return 100.25 + (t < 6 ? 0 : (t - 6) * 12);
  };
  Points p = sample(mem, 0.25, 8.5);
  Forecast f = forecast_exhaustion(p, uint64_t(256 * MiB));
  EXPECT_EQ(f.shape, GrowthShape::steady);
  ASSERT_TRUE(f.tte_s);
  EXPECT_NEAR(f.rate_per_s / MiB, 12, 1);
  EXPECT_NEAR(*f.tte_s, (256 - 130.25) / 12, 1.0);
  EXPECT_NEAR(f.basis_s, 2.5, 0.3) << "the regime starts at the knee, after the step";
}

TEST(Forecast, AcceleratingGrowthUsesTheCurve) {
  // Idle 3 s, then 1 MiB/s^2 (quadratic), 1 MiB steps: full (200 MiB) at 17 s.
  auto mem = [](double t) { return t < 3 ? 5.0 : 5 + steps((t - 3) * (t - 3), 1); };
  Points p = sample(mem, 0.25, 9);
  Forecast f = forecast_exhaustion(p, uint64_t(200 * MiB));
  EXPECT_EQ(f.shape, GrowthShape::accelerating);
  ASSERT_TRUE(f.tte_s);
  // 8 s remain; a line at the rate now (12 MiB/s, 41 MiB used) would say ~13 s.
  EXPECT_NEAR(*f.tte_s, 8.0, 1.2);
  EXPECT_TRUE(f.alert);
}

TEST(Forecast, StepThatStaysUnderGivesNoForecast) {
  auto mem = [](double t) { return t < 4 ? 5.0 : 120.0; };
  for (double until : {4.5, 5.0, 6.0, 10.0, 20.0}) {
    Forecast f = forecast_exhaustion(sample(mem, 0.25, until, 0.2), uint64_t(200 * MiB));
    EXPECT_FALSE(f.alert) << "at " << until << " s";
    if (until >= 6) {
      EXPECT_EQ(f.shape, GrowthShape::step) << "at " << until << " s";
      EXPECT_FALSE(f.tte_s) << "at " << until << " s";
    }
  }
  // A step over two samples (the allocation straddles a sample) is no trend either.
  auto two = [](double t) { return t < 4 ? 5.0 : t < 4.25 ? 60.0 : 120.0; };
  for (double until : {4.25, 4.5, 4.75, 8.0})
    EXPECT_FALSE(forecast_exhaustion(sample(two, 0.25, until), uint64_t(200 * MiB)).alert) << "at " << until;
}

TEST(Forecast, SawtoothUnderTheLimitNeverForecasts) {
  // 20 -> 128 MiB in 3 s, freed, again: after the first drop, nothing is forecast.
  auto mem = [](double t) { return 20 + steps(std::fmod(t, 3.0) * 36, 4); };
  for (double until = 3.25; until <= 30; until += 0.25) {
    Forecast f = forecast_exhaustion(sample(mem, 0.25, until), uint64_t(200 * MiB));
    EXPECT_FALSE(f.tte_s) << "at " << until << " s";
    EXPECT_EQ(f.shape, GrowthShape::sawtooth) << "at " << until << " s";
  }
}

TEST(Forecast, ASawtoothSampledSlowlyStillNeverForecasts) {
  // forecast_eval's real sawtooth (30 -> 130 MiB in 3 s, freed every 4 s, in
  // 200 MiB, 3 MiB the process holds besides) as a loaded machine samples
  // it: every 260-300 ms instead of 250, some samples later still. Larger
  // steps between samples raise the jump threshold (4 x the median step) to
  // 35-40 MiB, and a first peak at 133 MiB then stood within two thresholds
  // of the limit: it read as a run killed at the limit and restarted, and
  // the next ramp was forecast (CI saw one such false alert). Killed means
  // the peak was within a rise of the limit, not within two thresholds.
  auto mem = [](double t) { double ph = std::fmod(t, 4.0); return 3 + 30 + (ph < 3 ? std::floor(ph * 33) : 0); };
  for (double dt : {0.26, 0.27, 0.28, 0.30}) {
    for (unsigned seed = 1; seed <= 10; ++seed) {
      std::mt19937_64 rng(seed);
      std::uniform_real_distribution<double> late(0, 0.1);
      Points p;
      for (double t = 0; t <= 24; t += dt) {
        double at = t + (rng() % 3 == 0 ? late(rng) : 0.0);
        p.emplace_back(int64_t(at * 1e6), uint64_t(mem(at) * MiB));
        if (at < 3.5) continue;  // judged after the first drop, as the harness does
        Forecast f = forecast_exhaustion(p, uint64_t(200 * MiB));
        EXPECT_FALSE(f.alert) << "every " << dt << " s, seed " << seed << ", at " << at << " s: " << growth_shape_name(f.shape);
        if (f.alert) break;
      }
    }
  }
}

TEST(Forecast, SawtoothWithRisingPeaksFollowsThePeaks) {
  // Peaks rise 10 MiB per 4 s cycle (2.5 MiB/s) from 110 MiB; limit 300 MiB.
  auto mem = [](double t) { int c = int(t / 4); double ph = std::fmod(t, 4.0); return 20 + 10 * c + ph * 30; };
  Points p = sample(mem, 0.25, 40.1);
  Forecast f = forecast_exhaustion(p, uint64_t(300 * MiB));
  EXPECT_EQ(f.shape, GrowthShape::sawtooth);
  ASSERT_TRUE(f.tte_s);
  // Truth: the first instant the curve itself reaches the limit (a peak near 71.7 s).
  double truth = 0;
  for (double t = 40.1; t < 200; t += 0.01)
    if (mem(t) >= 300) {
      truth = t - 40.1;
      break;
    }
  EXPECT_NEAR(*f.tte_s, truth, 0.3 * truth);
  EXPECT_GT(f.rate_per_s / MiB, 2.0);
  EXPECT_LT(f.rate_per_s / MiB, 3.0);
}

TEST(Forecast, SlowLeakUnderNoise) {
  // 6 h at 15 s of 2 GiB + 150 MiB/h with 20 MiB noise, limit 4 GiB: full at ~13.7 h, 7.7 h from now.
  auto mem = [](double t) { return 2048 + 150 * t / 3600; };
  Points p = sample(mem, 15, 6 * 3600, 20, 7);
  Forecast f = forecast_exhaustion(p, uint64_t(4096 * MiB));
  EXPECT_EQ(f.shape, GrowthShape::leak);
  ASSERT_TRUE(f.tte_s);
  EXPECT_NEAR(*f.tte_s / 3600, (4096 - 2048 - 900) / 150.0, 0.15 * (4096 - 2048 - 900) / 150.0);
}

TEST(Forecast, NoiseAloneIsFlat) {
  Forecast f = forecast_exhaustion(sample([](double) { return 1000.0; }, 15, 3600, 20, 3), uint64_t(4096 * MiB));
  EXPECT_FALSE(f.tte_s);
  EXPECT_EQ(f.shape, GrowthShape::flat);
  f = forecast_exhaustion(sample([](double t) { return 1000 - t / 60; }, 1, 120), uint64_t(4096 * MiB));
  EXPECT_EQ(f.shape, GrowthShape::falling);
  EXPECT_FALSE(f.tte_s);
}

TEST(Forecast, KilledAndRestartedIsForecastAgain) {
  // It reached the limit and dropped to 0 (killed, restarted): the new run is forecast at once.
  auto mem = [](double t) { return t < 10 ? 20 + t * 18 : (t - 10.25) * 18; };
  Forecast f = forecast_exhaustion(sample(mem, 0.25, 13), uint64_t(200 * MiB));
  ASSERT_TRUE(f.tte_s);
  EXPECT_NEAR(*f.tte_s, (200 - 2.75 * 18) / 18, 1.0);
}

TEST(Forecast, CostIsBounded) {
  Points p = sample([](double t) { return 100 + t; }, 0.01, 600, 1);  // 60,000 points
  auto t0 = std::chrono::steady_clock::now();
  Forecast f = forecast_exhaustion(p, uint64_t(2000 * MiB));
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(f.tte_s);
  EXPECT_NEAR(*f.tte_s, 2000 - 700, 50);
  EXPECT_LT(ms, 100.0) << "decimated to 160 points";
}

Sample cgroup_at(double t, double mib, double limit_mib) {
  Sample s;
  s.time_us = int64_t(t * 1e6);
  CgroupSample c;
  c.path = "/job", c.version = 1;
  c.usage = uint64_t(mib * MiB), c.limit = uint64_t(limit_mib * MiB);
  s.cgroups.push_back(c);
  return s;
}

TEST(ForecastAlert, SaysTheShapeAndARange) {
  // The case through the engine: idle 30 s, then 20 MiB/s into 200 MiB. The first forecast alert
  // names the shape, gives a range around the time really left, and its JSON carries them.
  AlertPolicy policy;
  policy.warn_used_ratio = policy.critical_used_ratio = 2.0;  // headroom alerts out of the way
  AlertEngine engine(policy);
  std::optional<Alert> first;
  double at = 0;
  for (double t = 0; t < 45 && !first; t += 0.25) {
    double mib = t < 30 ? 5 : 5 + steps((t - 30) * 20, 5);
    for (const Alert& a : engine.observe(cgroup_at(t, mib, 200)))
      if (a.key == "tte:cgroup:/job" && !first) first = a, at = t;
  }
  ASSERT_TRUE(first);
  const double left = 30 + 195.0 / 20 - at;
  EXPECT_GE(left, 5.0) << "at least 5 s of warning";
  ASSERT_TRUE(first->tte_s && first->tte_low_s && first->tte_high_s);
  EXPECT_NEAR(*first->tte_s, left, 0.3 * left);
  EXPECT_LE(*first->tte_low_s, *first->tte_s);
  EXPECT_GE(*first->tte_high_s, *first->tte_s);
  EXPECT_EQ(first->shape, "steady growth");
  EXPECT_NE(first->message.find("(steady growth; "), std::string::npos) << first->message;
  EXPECT_NE(first->message.find(format_tte_range(*first->tte_low_s, *first->tte_high_s)), std::string::npos)
      << first->message;
  auto j = alert_json(*first);
  EXPECT_EQ(j["shape"], "steady growth");
  EXPECT_TRUE(j["tte_low_seconds"].is_number());
  EXPECT_TRUE(j["tte_high_seconds"].is_number());
  // The exporter's value is the same forecast.
  auto tte = engine.time_to_exhaustion();
  ASSERT_EQ(tte.size(), 1u);
  EXPECT_NEAR(tte[0].second, *first->tte_s, 1e-9);
}

TEST(ForecastAlert, SawtoothAndStepExportNothing) {
  AlertPolicy policy;
  policy.repeat_us = 0;  // every alert is delivered: the first ramp's must not hide later ones
  AlertEngine engine(policy);
  size_t first_ramp = 0;
  for (double t = 0; t < 40; t += 0.25) {
    Sample s = cgroup_at(t, 20 + steps(std::fmod(t, 3.0) * 36, 4), 200);
    CgroupSample step;
    step.path = "/step", step.version = 1;
    step.usage = uint64_t((t < 5 ? 5 : 120) * MiB), step.limit = uint64_t(200 * MiB);
    s.cgroups.push_back(step);
    for (const Alert& a : engine.observe(s)) {
      if (a.key.rfind("tte:", 0) != 0) continue;
      EXPECT_LE(t, 3.0) << "after the first drop: " << a.message;
      EXPECT_NE(a.key, "tte:cgroup:/job") << "in the first ramp: " << a.message;
      first_ramp += a.key == "tte:cgroup:/job";
      EXPECT_NE(a.key, "tte:cgroup:/step") << a.message;
    }
  }
  EXPECT_TRUE(engine.time_to_exhaustion().empty());
  // Nor the first ramp (36 MiB/s towards 200 MiB, "full in 2-3 s" to any
  // forecaster): the pool was never seen level before it, so it waits until
  // its forecast reaches at most half the ramp (AlertPolicy::
  // first_regime_extrapolation), and the drop comes first.
  EXPECT_EQ(first_ramp, 0u);
}

TEST(Forecast, RangesForPeople) {
  EXPECT_EQ(format_tte_range(8.2, 10.6), "8-11 s");
  EXPECT_EQ(format_tte_range(7.0, 7.0), "~7 s");
  EXPECT_EQ(format_tte_range(700, 950), "11-16 min");
  EXPECT_EQ(format_tte_range(7200, 9400), "2.0-2.6 h");
  EXPECT_EQ(format_tte_range(40000, 50000), "11-14 h");
}

}  // namespace
}  // namespace aimem::watch
