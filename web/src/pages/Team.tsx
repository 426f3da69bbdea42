// Organization, Team: the members and their roles (changed, or the member removed, by owners and admins),
// inviting by e-mail with a role, and the invitations still open (resent or revoked after confirming).
import { useState } from 'react';
import { api, ok, type Schemas } from '../api.ts';
import { BUILT_IN_ROLES, isBuiltInRole, ROLE_MEANINGS, useMyRole, type BuiltInRole } from '../permissions.ts';
import { readSession } from '../session.ts';
import {
  ConfirmDialog, DataTable, EmptyState, ErrorBanner, Field, PageHeader, SubmitButton, useApi, useSubmit, useToast, type Column,
} from '../ui/index.ts';

type Member = Schemas['TeamMember'];
type Invitation = Schemas['Invitation'];

const roleLabel = (role: string) => (isBuiltInRole(role) ? role[0]!.toUpperCase() + role.slice(1) : `Custom (${role})`);
const date = (iso: string) => new Date(iso).toLocaleDateString();

export default function Team() {
  const toast = useToast();
  const me = useMyRole();
  const canManage = me.can('team:write');
  const canAssign = me.can('roles:write');
  const members = useApi(() => ok(api.GET('/v1/team/members')), []);
  const invitations = useApi(() => ok(api.GET('/v1/team/invitations')), []);
  const { busy, error: inviteError, fields, onSubmit } = useSubmit();
  const roleChange = useSubmit();
  const [removing, setRemoving] = useState<Member>();
  const [revoking, setRevoking] = useState<Invitation>();
  const [resending, setResending] = useState<Invitation>();
  const myUserId = readSession()?.userId;

  const invite = onSubmit(async (form, formElement) => {
    const sent = await ok(api.POST('/v1/team/invite', { body: { email: String(form.get('email') ?? ''), role: String(form.get('role')) as BuiltInRole } }));
    toast(`Invitation sent to ${sent.email}`);
    formElement.reset();
    invitations.reload();
  });

  // Refused or not, the members are read again: the select shows the role the member really has.
  const changeRole = (member: Member, roleId: string) => roleChange.run(async () => {
    try {
      await ok(api.POST('/v1/enterprise/assignments', { body: { userId: member.userId, roleId } }));
      toast(`${member.name} is now ${roleLabel(roleId).toLowerCase()}`);
    } finally {
      members.reload();
    }
  });

  const memberColumns: Column<Member>[] = [
    { header: 'Name', cell: (m) => <strong>{m.name}{m.userId === myUserId ? ' (you)' : ''}</strong> },
    { header: 'E-mail', cell: (m) => m.email },
    {
      header: 'Role',
      cell: (m) =>
        canAssign && m.userId !== myUserId ? (
          <select className="select-inline" aria-label={`Role of ${m.name}`} value={m.role} onChange={(e) => void changeRole(m, e.target.value)}>
            {BUILT_IN_ROLES.map((r) => (
              <option key={r} value={r}>
                {roleLabel(r)}
              </option>
            ))}
            {!isBuiltInRole(m.role) && <option value={m.role}>{roleLabel(m.role)}</option>}
          </select>
        ) : (
          roleLabel(m.role)
        ),
    },
    { header: 'Joined', cell: (m) => date(m.joinedAt) },
    ...(canAssign
      ? [{
          header: 'Actions',
          cell: (m: Member) =>
            m.userId === myUserId ? null : (
              <button type="button" className="button button-danger-quiet" onClick={() => setRemoving(m)} aria-label={`Remove ${m.name}`}>
                Remove
              </button>
            ),
        }]
      : []),
  ];

  const open = invitations.data?.filter((i) => i.status === 'pending' || i.status === 'expired');
  const invitationColumns: Column<Invitation>[] = [
    { header: 'E-mail', cell: (i) => <strong>{i.email}</strong> },
    { header: 'Role', cell: (i) => roleLabel(i.role) },
    { header: 'Status', cell: (i) => (i.status === 'expired' ? <span className="badge badge-warning">Expired</span> : <span className="badge">Pending</span>) },
    { header: 'Expires', cell: (i) => date(i.expiresAt) },
    ...(canManage
      ? [{
          header: 'Actions',
          cell: (i: Invitation) => (
            <div className="row-actions">
              <button type="button" className="button" onClick={() => setResending(i)} aria-label={`Resend the invitation to ${i.email}`}>
                Resend
              </button>
              <button type="button" className="button button-danger-quiet" onClick={() => setRevoking(i)} aria-label={`Revoke the invitation to ${i.email}`}>
                Revoke
              </button>
            </div>
          ),
        }]
      : []),
  ];

  return (
    <>
      <PageHeader title="Team" description="The people in your organization and what their role lets them do." />

      {!me.loading && !canManage && (
        <p className="banner banner-info" data-testid="read-only-note">
          Your role ({me.role ? roleLabel(me.role).toLowerCase() : 'unknown'}) can see the team but not change it: owners and admins invite people and change roles.
        </p>
      )}

      {canManage && (
        <section className="card" aria-labelledby="invite-title">
          <h2 id="invite-title">Invite someone</h2>
          <form onSubmit={invite} noValidate className="stack">
            <ErrorBanner error={inviteError} />
            <Field label="E-mail" name="email" type="email" autoComplete="off" required hint="They get a link that works once, for 7 days." error={fields.email} />
            <fieldset className="radio-group">
              <legend>Role</legend>
              {BUILT_IN_ROLES.filter((r) => r !== 'owner' || me.role === 'owner').map((r) => (
                <label key={r} className="radio-option">
                  <input type="radio" name="role" value={r} defaultChecked={r === 'member'} />
                  <span>
                    <strong>{roleLabel(r)}</strong>
                    <span className="muted small block">{ROLE_MEANINGS[r]}</span>
                  </span>
                </label>
              ))}
            </fieldset>
            <div>
              <SubmitButton busy={busy} busyLabel="Sending…">Send invitation</SubmitButton>
            </div>
          </form>
        </section>
      )}

      <section aria-labelledby="members-title" className="stack">
        <h2 id="members-title">Members</h2>
        <ErrorBanner error={roleChange.error} />
        <ErrorBanner error={members.error} onRetry={members.reload} />
        {!members.error && <DataTable caption="Members" columns={memberColumns} rows={members.data} rowKey={(m) => m.userId} />}
      </section>

      <section aria-labelledby="invitations-title" className="stack">
        <h2 id="invitations-title">Open invitations</h2>
        <ErrorBanner error={invitations.error} onRetry={invitations.reload} />
        {!invitations.error && (
          <DataTable
            caption="Open invitations"
            columns={invitationColumns}
            rows={open}
            rowKey={(i) => i.id}
            empty={<EmptyState title="No open invitations">{canManage ? 'Invite someone above: they appear here until they answer.' : 'Nobody is waiting to join.'}</EmptyState>}
          />
        )}
      </section>

      {!me.loading && (
        <section className="card" aria-labelledby="roles-title">
          <h2 id="roles-title">What each role may do</h2>
          <dl className="definitions">
            {BUILT_IN_ROLES.map((r) => (
              <div key={r}>
                <dt>{roleLabel(r)}</dt>
                <dd className="muted">{ROLE_MEANINGS[r]}</dd>
              </div>
            ))}
          </dl>
        </section>
      )}

      <ConfirmDialog
        open={!!removing}
        title={`Remove ${removing?.name ?? ''}?`}
        confirmLabel="Remove member"
        onClose={() => setRemoving(undefined)}
        onConfirm={async () => {
          if (!removing) return;
          await ok(api.DELETE('/v1/enterprise/assignments', { params: { query: { userId: removing.userId } } }));
          toast(`${removing.name} removed`);
          members.reload();
        }}
      >
        <p>
          {removing?.email} loses access to this organization at once: their sessions and keys stop working here. You can invite them again later.
        </p>
      </ConfirmDialog>

      <ConfirmDialog
        open={!!revoking}
        title={`Revoke the invitation to ${revoking?.email ?? ''}?`}
        confirmLabel="Revoke invitation"
        onClose={() => setRevoking(undefined)}
        onConfirm={async () => {
          if (!revoking) return;
          await ok(api.DELETE('/v1/team/invitations/{id}', { params: { path: { id: revoking.id } } }));
          toast(`Invitation to ${revoking.email} revoked`);
          invitations.reload();
        }}
      >
        <p>The link they were sent stops working. This cannot be undone, but you can invite them again.</p>
      </ConfirmDialog>

      <ConfirmDialog
        open={!!resending}
        title={`Resend the invitation to ${resending?.email ?? ''}?`}
        confirmLabel="Resend invitation"
        destructive={false}
        onClose={() => setResending(undefined)}
        onConfirm={async () => {
          if (!resending) return;
          await ok(api.POST('/v1/team/invitations/{id}', { params: { path: { id: resending.id } }, body: { resend: true } }));
          toast(`Invitation resent to ${resending.email}`);
          invitations.reload();
        }}
      >
        <p>A new link is mailed, valid for 7 more days; the link sent before stops working.</p>
      </ConfirmDialog>
    </>
  );
}
