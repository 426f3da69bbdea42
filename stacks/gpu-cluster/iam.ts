// IAM roles that an AWS service (EKS, EC2) assumes, with AWS-managed policies attached.
import * as aws from '@pulumi/aws';
import type * as pulumi from '@pulumi/pulumi';

/** AWS-managed policies, commercial partition. */
export const POLICIES = {
  eksCluster: 'arn:aws:iam::aws:policy/AmazonEKSClusterPolicy',
  eksWorkerNode: 'arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy',
  eksCni: 'arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy',
  ecrReadOnly: 'arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly',
} as const;

export interface ServiceRole {
  readonly role: aws.iam.Role;
  /** Depend on these, not only the role: EKS refuses nodes whose role lacks its policies. */
  readonly attachments: aws.iam.RolePolicyAttachment[];
}

export function serviceRole(name: string, service: string, policyArns: readonly string[], parent: pulumi.Resource): ServiceRole {
  const role = new aws.iam.Role(`${name}-role`, {
    assumeRolePolicy: JSON.stringify({
      Version: '2012-10-17',
      Statement: [{ Effect: 'Allow', Action: 'sts:AssumeRole', Principal: { Service: service } }],
    }),
  }, { parent });
  const attachments = policyArns.map((policyArn) =>
    new aws.iam.RolePolicyAttachment(`${name}-${policyArn.split('/').pop()}`, { role: role.name, policyArn }, { parent }));
  return { role, attachments };
}
