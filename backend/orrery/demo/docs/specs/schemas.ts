import { z } from "zod";

export const CreateWorkspaceRequestSchema = z.object({
  name: z.string().min(1).max(80),
});

export const InviteMemberRequestSchema = z.object({
  email: z.string().email(),
  role: z.enum(["admin", "member", "guest"]).default("member"),
});

export const PriceEstimateRequestSchema = z.object({
  seats: z.number().int().min(1),
  monthlyEvents: z.number().int().min(0),
});
