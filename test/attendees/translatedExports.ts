/*
 * Guest list exports as pretix and Hi.Events write them in each language, built from the strings of
 * the tools' own translation catalogues (copied here, so the tests need nothing outside the repo):
 *
 * - pretix: src/pretix/locale/{de,fr,es,nl,it}/LC_MESSAGES/django.po at commit bb0a6a80 (POT-Creation-Date
 *   2026-01-26). Column order from plugins/checkinlists/exporters.py (CSVCheckinList) and
 *   base/exporters/orderlist.py ("Order positions"), as the catalogue's `#:` line references place them.
 *   A msgid without a usable msgstr (Italian "Checked in", "Secret", "Automatically checked in") is written
 *   in English, as gettext does. "Add-on to position ID" is not in the researched strings: left out of the
 *   translated sheets (the English one has it).
 * - Hi.Events: backend/app/Exports/AttendeesExport.php headings through __() with backend/lang/<lang>.json
 *   at commit 944433c (2026-04-08). "Check Ins" has an empty translation: written in English.
 */
import type { Language } from '../../src/attendees/toolHeaders.js'

type Lang = Exclude<Language, 'en'> | 'en'

const by = <T>(values: Record<Lang, T>) => values

/** The msgstr per language of each string the exports use (English: the msgid). */
const PRETIX = {
  orderCode: by({ en: 'Order code', de: 'Bestellnummer', fr: 'Code de commande', es: 'Código del pedido', nl: 'Bestelcode', it: 'Codice ordine' }),
  attendeeName: by({ en: 'Attendee name', de: 'Name Teilnehmer*in', fr: 'Nom du participant', es: 'Nombre del asistente', nl: 'Naam van deelnemer', it: 'Nome del partecipante' }),
  partLabel: by({ en: 'Attendee name: {part}', de: 'Teilnehmer*innenname: {part}', fr: 'Nom du participant : {part}', es: 'Nombre del asistente: {part}', nl: 'Naam deelnemer: {part}', it: 'Nome del partecipante: {part}' }),
  givenName: by({ en: 'Given name', de: 'Vorname', fr: 'Prénom', es: 'Nombre', nl: 'Voornaam', it: 'Nome' }),
  familyName: by({ en: 'Family name', de: 'Nachname', fr: 'Nom de famille', es: 'Apellido', nl: 'Achternaam', it: 'Cognome' }),
  product: by({ en: 'Product', de: 'Produkt', fr: 'Produit', es: 'Producto', nl: 'Product', it: 'Prodotto' }),
  variation: by({ en: 'Variation', de: 'Variante', fr: 'Variante', es: 'Variacion', nl: 'Variant', it: 'Variante' }),
  price: by({ en: 'Price', de: 'Preis', fr: 'Prix', es: 'Precio', nl: 'Prijs', it: 'Prezzo' }),
  checkedIn: by({ en: 'Checked in', de: 'Eingecheckt', fr: 'Enregistré', es: 'Chequeado', nl: 'Ingecheckt', it: 'Checked in' }),
  checkedOut: by({ en: 'Checked out', de: 'Ausgetreten', fr: 'Passé en caisse', es: 'Comprado', nl: 'Uitgecheckt', it: 'Verifica il tuo ordine' }),
  autoCheckedIn: by({ en: 'Automatically checked in', de: 'Automatisch eingecheckt', fr: 'Enregistrement automatique', es: 'Registro automático', nl: 'Automatisch ingecheckt', it: 'Automatically checked in' }),
  paid: by({ en: 'Paid', de: 'bezahlt', fr: 'Payé', es: 'Pagado', nl: 'Betaald', it: 'Pagato' }),
  secret: by({ en: 'Secret', de: 'Secret', fr: 'Secret', es: 'Secreto', nl: 'Geheim', it: 'Secret' }),
  email: by({ en: 'Email', de: 'E-Mail', fr: 'E-Mail', es: 'Correo electrónico', nl: 'E-mail', it: 'Email' }),
  phone: by({ en: 'Phone number', de: 'Telefonnummer', fr: 'Numéro de téléphone', es: 'Número de teléfono', nl: 'Telefoonnummer', it: 'Numero di telefono' }),
  attention: by({
    en: 'Requires special attention',
    de: 'Benötigt besondere Behandlung',
    fr: 'Nécessite une attention particulière',
    es: 'Requiere una atención especial',
    nl: 'Vereist speciale aandacht',
    it: 'Richiede particolare attenzione',
  }),
  comment: by({ en: 'Comment', de: 'Kommentar', fr: 'Commentaire', es: 'Comentario', nl: 'Opmerking', it: 'Commento' }),
  blocked: by({ en: 'Blocked', de: 'Gesperrt', fr: 'Bloqué', es: 'Bloqueado', nl: 'Geblokkeerd', it: 'Bloccato' }),
  eventSlug: by({ en: 'Event slug', de: 'Kurzname der Veranstaltung', fr: "Titre de l'événement", es: 'Slug del evento', nl: 'Evenement-slug (verkorte vorm)', it: "Slug dell'evento" }),
  positionId: by({ en: 'Position ID', de: 'Position', fr: 'ID de la position', es: 'ID de posición', nl: 'Product-ID', it: 'ID posizione' }),
  status: by({ en: 'Status', de: 'Status', fr: 'Statut', es: 'Estado', nl: 'Status', it: 'Stato' }),
  attendeeEmail: by({ en: 'Attendee email', de: 'E-Mail Teilnehmer*in', fr: 'E-mail du participant', es: 'Correo electrónico del participante', nl: 'E-mailadres van deelnemer', it: 'Email partecipante' }),
  ticketSecret: by({ en: 'Ticket secret', de: 'Ticket-Code', fr: 'Secret du billet', es: 'Secreto de la entrada', nl: 'Ticketgeheim', it: 'Biglietto segreto' }),
  orderComment: by({ en: 'Order comment', de: 'Bestellkommentar', fr: 'Commentaire de commande', es: 'Comentario del pedido', nl: 'Opmerking bestelling', it: "Commento all'ordine" }),
  yes: by({ en: 'Yes', de: 'Ja', fr: 'Oui', es: 'Si', nl: 'Ja', it: 'Sì' }),
  no: by({ en: 'No', de: 'Nein', fr: 'Non', es: 'No', nl: 'Nee', it: 'No' }),
  pending: by({ en: 'pending', de: 'ausstehend', fr: 'en attente', es: 'pendiente', nl: 'openstaand', it: 'in attesa' }),
  paidStatus: by({ en: 'paid', de: 'bezahlt', fr: 'Payé', es: 'pagado', nl: 'betaald', it: 'pagato' }),
  expired: by({ en: 'expired', de: 'abgelaufen', fr: 'expiré', es: 'expirado', nl: 'verlopen', it: 'scaduto' }),
  canceled: by({ en: 'canceled', de: 'storniert', fr: 'annulé', es: 'cancelado', nl: 'geannuleerd', it: 'cancellato' }),
}

export const LANGS: readonly Lang[] = ['en', 'de', 'fr', 'es', 'nl', 'it']

const csv = (rows: readonly (readonly string[])[]) => rows.map((row) => row.map((cell) => `"${cell.replaceAll('"', '""')}"`).join(',')).join('\r\n') + '\r\n'

/**
 * A pretix check-in list (Secret and Paid included, the given_family name scheme): Zoë is paid, the
 * second ticket's invoice name is empty (the list falls back to it) and its order pending, the third blocked.
 */
export function pretixCheckin(lang: Lang): string {
  const p = (key: keyof typeof PRETIX) => PRETIX[key][lang]
  const part = (label: string) => p('partLabel').replace('{part}', label)
  const header = [p('orderCode'), p('attendeeName'), part(p('givenName')), part(p('familyName')), p('product'), p('price'), p('checkedIn'), p('checkedOut'), p('autoCheckedIn'), p('paid'), p('secret'), p('email'), p('phone'), p('attention'), p('comment'), p('blocked')]
  return csv([
    header,
    ['Q7PFR', 'Zoë Müller', 'Zoë', 'Müller', 'Konferenz', '249.00', '', '', p('no'), p('yes'), 'u8m2kq4x7ts9hbnw3cyv6ea5rdpf2jgz', 'zoe@example.org', '', p('no'), '', ''],
    ['KX3LN', '', '', '', 'Konferenz', '249.00', '', '', p('no'), p('no'), 'p3rw9nq2c7xk5hd8mzt4yvb6aegs2fju', '', '', p('yes'), 'Rollstuhl', ''],
    ['M2D9T', 'Priya Natarajan', 'Priya', 'Natarajan', 'Konferenz', '249.00', '', '', p('no'), p('yes'), 'x6kd2mp8qv4hn9wc3tr7bza5eyfsg2ju', 'priya@example.net', '', p('no'), '', p('yes')],
  ])
}

/**
 * A pretix "Order positions" sheet as CSV: Zoë's ticket and a T-shirt of her order (no attendee: skipped),
 * a ticket nobody named in a pending order (imported nameless, the buyer's email), a cancelled and an
 * expired order (skipped).
 */
export function pretixPositions(lang: Lang): string {
  const p = (key: keyof typeof PRETIX) => PRETIX[key][lang]
  // orderlist.py: _('Attendee name') + ': ' + label
  const part = (label: string) => `${p('attendeeName')}: ${label}`
  // "Product ID" (orderlist.py:631) only where its msgstr was read: Dutch writes it "Product-ID", as it writes
  // "Position ID", so the Dutch sheet has two columns of that name (the position's first).
  const productId = lang === 'en' ? ['Product ID'] : lang === 'nl' ? ['Product-ID'] : []
  const header = [
    p('eventSlug'), p('orderCode'), p('positionId'), p('status'), p('email'), p('phone'), p('product'), ...productId, p('variation'), p('price'),
    p('attendeeName'), part(p('givenName')), part(p('familyName')), p('attendeeEmail'), p('ticketSecret'), p('blocked'), p('orderComment'),
    ...(lang === 'en' ? ['Add-on to position ID'] : []),
  ]
  const row = (cells: string[], addOn = '') => {
    const [slug, order, position, status, email, phone, product, id, ...rest] = cells
    const withId = [slug!, order!, position!, status!, email!, phone!, product!, ...(productId.length > 0 ? [id!] : []), ...rest]
    return lang === 'en' ? [...withId, addOn] : withId
  }
  return csv([
    header,
    row(['democon', 'Q7PFR', '1', p('paidStatus'), 'buyer@example.org', '', 'Konferenz', '11', 'Frühbucher', '249.00', 'Zoë Müller', 'Zoë', 'Müller', 'zoe@example.org', 'u8m2kq4x7ts9hbnw3cyv6ea5rdpf2jgz', '', '']),
    row(['democon', 'Q7PFR', '2', p('paidStatus'), 'buyer@example.org', '', 'T-Shirt', '12', 'L', '25.00', '', '', '', '', 'p3rw9nq2c7xk5hd8mzt4yvb6aegs2fju', '', ''], '1'),
    row(['democon', 'KX3LN', '1', p('pending'), 'kim@example.com', '', 'Konferenz', '11', '', '249.00', '', '', '', '', 'x6kd2mp8qv4hn9wc3tr7bza5eyfsg2ju', '', 'Rechnung folgt']),
    row(['democon', 'ZZ9AA', '1', p('canceled'), 'gone@example.org', '', 'Konferenz', '11', '', '249.00', 'Old Guest', 'Old', 'Guest', '', 'a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1', '', '']),
    row(['democon', 'M4RT2', '1', p('expired'), 'late@example.org', '', 'Konferenz', '11', '', '249.00', 'Late Guest', 'Late', 'Guest', '', 'b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2', '', '']),
  ])
}

/** Hi.Events' current headings (since 25af7c71, 2025-10-18) per backend/lang/<lang>.json. */
const HIEVENTS = {
  ID: by({ en: 'ID', de: 'ID', fr: 'ID', es: 'ID', nl: 'ID', it: 'ID' }),
  'First Name': by({ en: 'First Name', de: 'Vorname', fr: 'Prénom', es: 'Nombre', nl: 'Voornaam', it: 'Nome' }),
  'Last Name': by({ en: 'Last Name', de: 'Nachname', fr: 'Nom', es: 'Apellido', nl: 'Achternaam', it: 'Cognome' }),
  Email: by({ en: 'Email', de: 'E-Mail', fr: 'E-mail', es: 'Correo electrónico', nl: 'E-mail', it: 'Email' }),
  Status: by({ en: 'Status', de: 'Status', fr: 'Statut', es: 'Estado', nl: 'Status', it: 'Status' }),
  'Check Ins': by({ en: 'Check Ins', de: 'Check Ins', fr: 'Check Ins', es: 'Check Ins', nl: 'Check Ins', it: 'Check Ins' }),
  'Product ID': by({ en: 'Product ID', de: 'Produkt-ID', fr: 'ID du produit', es: 'ID del producto', nl: 'Product-ID', it: 'ID del prodotto' }),
  'Product Name': by({ en: 'Product Name', de: 'Produktname', fr: 'Nom du produit', es: 'Nombre del producto', nl: 'Productnaam', it: 'Nome del prodotto' }),
  'Event ID': by({ en: 'Event ID', de: 'Veranstaltungs-ID', fr: "ID de l'événement", es: 'ID del evento', nl: 'Evenement-ID', it: "ID dell'evento" }),
  'Public ID': by({ en: 'Public ID', de: 'Öffentliche ID', fr: 'ID public', es: 'ID público', nl: 'Publieke ID', it: 'ID pubblico' }),
  'Short ID': by({ en: 'Short ID', de: 'Kurz-ID', fr: 'ID court', es: 'ID corto', nl: 'Korte ID', it: 'ID corto' }),
  'Created Date': by({ en: 'Created Date', de: 'Erstellungsdatum', fr: 'Date de création', es: 'Fecha de creación', nl: 'Aanmaakdatum', it: 'Data di creazione' }),
  'Last Updated Date': by({ en: 'Last Updated Date', de: 'Letztes Aktualisierungsdatum', fr: 'Date de dernière mise à jour', es: 'Fecha de última actualización', nl: 'Laatst bijgewerkt', it: "Data dell'ultimo aggiornamento" }),
  Notes: by({ en: 'Notes', de: 'Notizen', fr: 'Notes', es: 'Notas', nl: 'Notities', it: 'Note' }),
}

/** The Hi.Events attendees sheet (as CSV): an active guest, one awaiting payment, one cancelled (statuses are never translated). */
export function hiEventsRows(lang: Lang): string[][] {
  return [
    Object.values(HIEVENTS).map((heading) => heading[lang]),
    ['101', 'Chloé', 'Dubois', 'chloe@example.fr', 'ACTIVE', '', '12', 'Entrée générale', '3', 'A-7KQ2M9X', 'aX9fK2LmQ7pRt', '2025-05-02 14:11:09', '2025-05-02 14:11:09', 'Végétarienne'],
    ['102', 'Tom', 'Baker', 'tom@example.com', 'AWAITING_PAYMENT', '', '13', 'VIP', '3', 'A-P4ZT8WN', 'aB3cD4eF5gH6j', '2025-05-03 10:00:00', '2025-05-03 10:00:00', ''],
    ['103', 'Mei', 'Chen', 'mei@example.com', 'CANCELLED', '', '12', 'Entrée générale', '3', 'A-R2VY6HD', 'aQ1wE2rT3yU4i', '2025-05-04 19:22:31', '2025-05-05 08:14:02', ''],
  ]
}

export const hiEvents = (lang: Lang) => csv(hiEventsRows(lang))

/**
 * Hi.Events between 35c33744 (2024-12-20, "Add ticket name to export") and bd60daad (2025-02-27): English
 * literal headings with `Ticket ID` and `Ticket Name`, `Is Checked In` Yes/No.
 */
export const hiEventsTicketName = csv([
  ['ID', 'First Name', 'Last Name', 'Email', 'Status', 'Is Checked In', 'Checked In At', 'Ticket ID', 'Ticket Name', 'Event ID', 'Public ID', 'Short ID', 'Created Date', 'Last Updated Date'],
  ['7', 'Ines', 'Duarte', 'ines@example.pt', 'ACTIVE', 'No', '', '4', 'Early Bird', '2', 'A-EB7TN2Q', 'zQ8xW7cE6vR5t', '2025-01-10 12:00:00', '2025-01-10 12:00:00'],
  ['8', 'Omar', 'Haddad', 'omar@example.com', 'ACTIVE', 'Yes', '2025-01-30 18:02:11', '5', '', '2', 'A-GN4XK9P', 'yT6uI5oP4aS3d', '2025-01-11 12:00:00', '2025-01-30 18:02:11'],
])
