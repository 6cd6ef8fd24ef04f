// The one internal request record every front end becomes: Kueue topology annotations,
// implied TAS and (later) Volcano networkTopology all turn into a PlacementRequest.

import type { NodeSelectorTerm, PreferredSchedulingTerm, SliceLayer, StringMap, Toleration } from '../api/objects.ts';
import type { ResourceAmounts } from '../api/resources.ts';

export const Profile = {
  Mixed: 'Mixed',
  BestFit: 'BestFit',
  LeastFreeCapacity: 'LeastFreeCapacity',
  BalancedPlacement: 'BalancedPlacement',
} as const;
export type Profile = (typeof Profile)[keyof typeof Profile];

export type Algorithm = 'BestFit' | 'LeastFreeCapacity';

/**
 * - `required`: all units inside one domain of `level`;
 * - `preferred`: one domain of `level` if possible, else climb, else split at the top;
 * - `unconstrained`: split freely at the search level (the lowest level, or the top
 *   level for slice-only requests).
 */
export type RequestMode = 'required' | 'preferred' | 'unconstrained';

export interface PlacementRequest {
  /** PodSet name (the workers' PodSet for a leader/worker group). */
  podSetName: string;
  count: number;
  /** Requests of one pod, without the implicit `pods: 1`. */
  requests: ResourceAmounts;
  mode: RequestMode;
  /** Level key for required/preferred; undefined for unconstrained. */
  level?: string;
  /**
   * Preferred requests only: the highest level the search may climb to; at that level the
   * request behaves as required (Volcano's hard mode with `highestTierAllowed`).
   */
  maxLevel?: string;
  /** True when the PodSet had no topology request (implied TAS). */
  implied?: boolean;
  /** Slice layers, outermost first (the legacy slice pair is a one-element list). */
  sliceLayers: SliceLayer[];
  nodeSelector?: StringMap;
  /** PodSet tolerations followed by the flavor's. */
  tolerations: Toleration[];
  requiredAffinity?: NodeSelectorTerm[];
  preferredAffinity?: PreferredSchedulingTerm[];
  /** The leader of a leader/worker PodSet group: one pod placed with the workers. */
  leader?: { podSetName: string; requests: ResourceAmounts };
}

export interface FeatureGates {
  TASProfileMixed: boolean;
  TASBalancedPlacement: boolean;
  TASRespectNodeAffinityPreferred: boolean;
  TASMultiLayerTopology: boolean;
  TASAssignmentsEncodingByHostnamePrefix: boolean;
  TASFailedNodeReplacement: boolean;
  /** A Workload owned by a single Pod (not a pod group) keeps its assignment when its node fails. */
  SkipReassignmentForPodOwnedWorkloads: boolean;
}

/** The peer's defaults at the commit the specs describe (kueue-tas.md, header). */
export const DEFAULT_GATES: FeatureGates = {
  TASProfileMixed: true,
  TASBalancedPlacement: false,
  TASRespectNodeAffinityPreferred: false,
  TASMultiLayerTopology: true,
  TASAssignmentsEncodingByHostnamePrefix: true,
  TASFailedNodeReplacement: true,
  SkipReassignmentForPodOwnedWorkloads: true,
};

/** The algorithm a request uses under a profile (KEP-2724 "Selecting the algorithm"). */
export function algorithmFor(profile: Profile, mode: RequestMode): Algorithm {
  switch (profile) {
    case 'BestFit':
      return 'BestFit';
    case 'LeastFreeCapacity':
      return 'LeastFreeCapacity';
    default:
      return mode === 'unconstrained' ? 'LeastFreeCapacity' : 'BestFit';
  }
}

/** The profile the gates select; `TASProfileMixed` off means always BestFit. */
export function profileFromGates(g: FeatureGates): Profile {
  if (g.TASBalancedPlacement) return 'BalancedPlacement';
  return g.TASProfileMixed ? 'Mixed' : 'BestFit';
}
