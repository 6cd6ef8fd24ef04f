// Loaded before every test file (scripts/run-tests.mjs): fast-check's property tests run
// from a fixed seed, so CI is reproducible and a rare slow random case cannot push the suite
// past its time budget. Explore other cases with FC_SEED=<n> npm test.
import fc from 'fast-check';

fc.configureGlobal({ seed: Number(process.env.FC_SEED ?? 20261121) });
