import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

@Entity('volume')
export class VolumeEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('text')
  name!: string;

  @Column('integer', { name: 'size_gib' })
  sizeGib!: number;

  @Column('text', { name: 'storage_class' })
  storageClass!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
